package gin

import (
	"math"
	"net"
	"net/http"
	"strings"

	"github.com/acme/gin-lite/binding"
	"github.com/acme/gin-lite/render"
)

const abortIndex int8 = math.MaxInt8 >> 1

// Param is a single URL parameter: a key and a value.
type Param struct {
	Key   string
	Value string
}

// Params is the ordered slice of URL parameters returned by the router.
type Params []Param

// Context carries the request, the response writer and the handler chain.
type Context struct {
	writermem responseWriter
	Request   *http.Request
	Writer    ResponseWriter
	params    *Params
	handlers  HandlersChain
	index     int8
	fullPath  string
	engine    *Engine
	Keys      map[string]any
	Errors    errorMsgs
}

func (c *Context) reset() {
	c.Writer = &c.writermem
	*c.params = (*c.params)[:0]
	c.handlers = nil
	c.index = -1
	c.fullPath = ""
	c.Keys = nil
	c.Errors = c.Errors[:0]
}

// Next runs the pending handlers of the chain inside the calling handler.
func (c *Context) Next() {
	c.index++
	for c.index < int8(len(c.handlers)) {
		c.handlers[c.index](c)
		c.index++
	}
}

// IsAborted reports whether the current context was aborted.
func (c *Context) IsAborted() bool {
	return c.index >= abortIndex
}

// Abort prevents pending handlers from being called.
func (c *Context) Abort() {
	c.index = abortIndex
}

// AbortWithStatus calls Abort and writes the headers with the given status code.
func (c *Context) AbortWithStatus(code int) {
	c.Status(code)
	c.Writer.WriteHeaderNow()
	c.Abort()
}

// Param returns the value of the URL parameter named key.
func (c *Context) Param(key string) string {
	for _, entry := range *c.params {
		if entry.Key == key {
			return entry.Value
		}
	}
	return ""
}

// Query returns the keyed url query value if it exists.
func (c *Context) Query(key string) string {
	return c.Request.URL.Query().Get(key)
}

// DefaultQuery returns the keyed query value or defaultValue when it is missing.
func (c *Context) DefaultQuery(key, defaultValue string) string {
	if values, ok := c.Request.URL.Query()[key]; ok && len(values) > 0 {
		return values[0]
	}
	return defaultValue
}

// Set stores a key/value pair for this context only.
func (c *Context) Set(key string, value any) {
	if c.Keys == nil {
		c.Keys = make(map[string]any)
	}
	c.Keys[key] = value
}

// Get returns the value for the given key and whether it exists.
func (c *Context) Get(key string) (value any, exists bool) {
	value, exists = c.Keys[key]
	return
}

// ClientIP returns the first address of X-Forwarded-For, then X-Real-Ip,
// then the remote address of the connection.
func (c *Context) ClientIP() string {
	if forwarded := c.Request.Header.Get("X-Forwarded-For"); forwarded != "" {
		first, _, _ := strings.Cut(forwarded, ",")
		return strings.TrimSpace(first)
	}
	if realIP := strings.TrimSpace(c.Request.Header.Get("X-Real-Ip")); realIP != "" {
		return realIP
	}
	ip, _, err := net.SplitHostPort(strings.TrimSpace(c.Request.RemoteAddr))
	if err != nil {
		return ""
	}
	return ip
}

// ShouldBindJSON decodes the request body into obj.
func (c *Context) ShouldBindJSON(obj any) error {
	return binding.JSON.Bind(c.Request, obj)
}

// Status sets the HTTP response code.
func (c *Context) Status(code int) {
	c.Writer.WriteHeader(code)
}

// JSON serializes obj as JSON into the response body.
func (c *Context) JSON(code int, obj any) {
	c.Render(code, render.JSON{Data: obj})
}

// SecureJSON prefixes JSON arrays to defend against JSON hijacking.
func (c *Context) SecureJSON(code int, obj any) {
	c.Render(code, render.SecureJSON{Prefix: "while(1);", Data: obj})
}

// String writes a formatted text response.
func (c *Context) String(code int, format string, values ...any) {
	c.Render(code, render.String{Format: format, Data: values})
}

// Render writes the response headers and calls r.Render.
func (c *Context) Render(code int, r render.Render) {
	c.Status(code)
	if !bodyAllowedForStatus(code) {
		r.WriteContentType(c.Writer)
		c.Writer.WriteHeaderNow()
		return
	}
	if err := r.Render(c.Writer); err != nil {
		c.Error(err)
		c.Abort()
	}
}

func bodyAllowedForStatus(status int) bool {
	switch {
	case status >= 100 && status <= 199:
		return false
	case status == http.StatusNoContent, status == http.StatusNotModified:
		return false
	}
	return true
}