// Package gin implements a small HTTP router in the spirit of gin.
package gin

import (
	"net/http"
	"sync"
)

// HandlerFunc defines the handler used by routes and middleware.
type HandlerFunc func(*Context)

// HandlersChain is an ordered list of handlers.
type HandlersChain []HandlerFunc

// H is a shortcut for map[string]any.
type H map[string]any

// Engine holds the routing trees, the middleware and the context pool.
type Engine struct {
	RouterGroup
	trees                  map[string]*node
	pool                   sync.Pool
	noRoute                HandlersChain
	maxParams              uint16
	RedirectTrailingSlash  bool
	HandleMethodNotAllowed bool
}

// New returns a blank Engine without any middleware attached.
func New() *Engine {
	engine := &Engine{
		RouterGroup:           RouterGroup{basePath: "/", root: true},
		trees:                 make(map[string]*node),
		RedirectTrailingSlash: true,
	}
	engine.RouterGroup.engine = engine
	engine.pool.New = func() any {
		return engine.allocateContext()
	}
	return engine
}

// Default returns an Engine with the given middleware already attached.
func Default(middleware ...HandlerFunc) *Engine {
	engine := New()
	engine.Use(middleware...)
	return engine
}

func (engine *Engine) allocateContext() *Context {
	params := make(Params, 0, engine.maxParams)
	return &Context{engine: engine, params: &params}
}

// NoRoute registers handlers that run when no route matches.
func (engine *Engine) NoRoute(handlers ...HandlerFunc) {
	engine.noRoute = engine.combineHandlers(handlers)
}

func (engine *Engine) addRoute(method, path string, handlers HandlersChain) {
	assert1(path[0] == '/', "path must begin with '/'")
	root := engine.trees[method]
	if root == nil {
		root = new(node)
		engine.trees[method] = root
	}
	root.addRoute(path, handlers)
	if paramsCount := countParams(path); paramsCount > engine.maxParams {
		engine.maxParams = paramsCount
	}
}

// ServeHTTP makes the engine an http.Handler.
func (engine *Engine) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	c := engine.pool.Get().(*Context)
	c.writermem.reset(w)
	c.Request = req
	c.reset()
	engine.handleHTTPRequest(c)
	engine.pool.Put(c)
}

func (engine *Engine) handleHTTPRequest(c *Context) {
	httpMethod := c.Request.Method
	rPath := cleanPath(c.Request.URL.Path)
	if root := engine.trees[httpMethod]; root != nil {
		value := root.getValue(rPath, c.params)
		if value.handlers != nil {
			c.handlers = value.handlers
			c.fullPath = value.fullPath
			c.Next()
			c.writermem.WriteHeaderNow()
			return
		}
		if httpMethod != http.MethodConnect && rPath != "/" {
			if value.tsr && engine.RedirectTrailingSlash {
				redirectTrailingSlash(c)
				return
			}
		}
	}
	if engine.HandleMethodNotAllowed {
		if allowed := engine.allowedMethods(rPath); allowed != "" {
			c.Writer.Header().Set("Allow", allowed)
			c.handlers = engine.noRoute
			serveError(c, http.StatusMethodNotAllowed, "405 method not allowed")
			return
		}
	}
	c.handlers = engine.noRoute
	serveError(c, http.StatusNotFound, "404 page not found")
}

func (engine *Engine) allowedMethods(path string) string {
	allowed := ""
	for method, root := range engine.trees {
		if value := root.getValue(path, nil); value.handlers != nil {
			if allowed != "" {
				allowed += ", "
			}
			allowed += method
		}
	}
	return allowed
}

func redirectTrailingSlash(c *Context) {
	p := c.Request.URL.Path
	if length := len(p); length > 1 && p[length-1] == '/' {
		p = p[:length-1]
	} else {
		p = p + "/"
	}
	code := http.StatusMovedPermanently
	if c.Request.Method != http.MethodGet {
		code = http.StatusTemporaryRedirect
	}
	http.Redirect(c.Writer, c.Request, p, code)
	c.writermem.WriteHeaderNow()
}

func serveError(c *Context, code int, defaultMessage string) {
	c.writermem.status = code
	c.Next()
	if c.writermem.Written() {
		return
	}
	c.Writer.Header().Set("Content-Type", "text/plain")
	c.Writer.WriteHeader(code)
	c.Writer.Write([]byte(defaultMessage))
}

// Run attaches the engine to an http.Server and starts listening.
func (engine *Engine) Run(addr ...string) error {
	address := resolveAddress(addr)
	return http.ListenAndServe(address, engine)
}

func resolveAddress(addr []string) string {
	switch len(addr) {
	case 0:
		return ":8080"
	case 1:
		return addr[0]
	default:
		panic("too many parameters")
	}
}

func assert1(guard bool, text string) {
	if !guard {
		panic(text)
	}
}