#!/usr/bin/env python3
"""Regenerate the bundled synthetic Agent Retrieval Bench (ARB) style test data.

Run from the project root::

    python testdata/make_testdata.py

Everything under ``testdata/release``, ``testdata/trees`` and the files
``testdata/agent_retrieval_bench_synthetic_v1.tar.zst`` and ``testdata/README.md``
is rewritten. The output is byte-for-byte deterministic: no clocks, no random
numbers, sorted tar members with fixed metadata and a fixed zstd level.

Only the standard library and ``zstandard`` are needed.

The three repositories below are invented. Their file texts are kept free of
leading/trailing whitespace, use "\\n" line endings and stay below 8,000
characters, so the chunk rows written here are exactly what the ARB corpus
builder would produce for the same files (file chunk + symbol chunks).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import tarfile
import textwrap
from pathlib import Path

import zstandard

RELEASE = "synthetic_v1"
ZSTD_LEVEL = 19
MAX_CHUNK_CHARS = 8_000
HERE = Path(__file__).resolve().parent


def sha1_hex(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def base_commit_for(repo: str) -> str:
    return sha1_hex(f"synthetic-base-commit:{repo}")


def sample_id(label: str) -> str:
    return sha1_hex(f"synthetic-sample:{label}")[:24]


def fake_commit(label: str) -> str:
    return sha1_hex(f"synthetic-fix-commit:{label}")


def src(text: str, tabs: bool = False) -> str:
    """Dedent an inline file body; optionally turn 4-space indents into tabs (Go)."""
    body = textwrap.dedent(text).strip()
    if tabs:
        lines = []
        for line in body.split("\n"):
            stripped = line.lstrip(" ")
            depth = (len(line) - len(stripped)) // 4
            lines.append("\t" * depth + stripped)
        body = "\n".join(lines)
    return body


# ---------------------------------------------------------------------------
# Repository 1: acme/gin-lite (Go) - a tiny HTTP router
# ---------------------------------------------------------------------------


def gin_lite_files() -> dict[str, str]:
    go = lambda text: src(text, tabs=True)  # noqa: E731
    files: dict[str, str] = {}
    files["README.md"] = src(r'''
        # gin-lite

        A deliberately small HTTP router for Go, inspired by gin. It keeps the parts
        people actually use: a radix-tree router with `:param` and `*catchAll`
        segments, route groups, a middleware chain and JSON rendering.

        ```go
        r := gin.Default(middleware.Logger(), middleware.Recovery())
        r.GET("/users/:id", func(c *gin.Context) {
            c.JSON(200, gin.H{"id": c.Param("id")})
        })
        r.Run(":8080")
        ```

        ## Features

        - radix tree routing (`tree.go`) with trailing-slash redirects
        - route groups with shared middleware (`routergroup.go`)
        - request binding for JSON and form bodies (`binding/`)
        - panic recovery, access logging and CORS middleware (`middleware/`)

        ## Non-goals

        HTTP/2 server push, template rendering and a naïve "magic" auto-binding of
        every request header are out of scope; use the standard library for those.

        ## Development

        `go test ./...` runs the unit tests. See `docs/routing.md` for the routing rules.
    ''')
    files["go.mod"] = src(r'''
        module github.com/acme/gin-lite

        go 1.21
    ''')
    files["docs/routing.md"] = src(r'''
        # Routing rules

        Routes are stored per HTTP method in a radix tree. Each node holds a path
        segment; children are either static, a single `:param` child or a single
        `*catchAll` child, which must be the last segment.

        * `/users/:id` matches `/users/42` and sets `Param("id") == "42"`.
        * `/static/*filepath` matches everything below `/static/`.
        * Conflicting wildcards (`/users/:id` and `/users/:name`) panic at registration.

        When no route matches but the same path with (or without) a trailing slash
        does, the engine answers with a redirect (301 for GET, 307 otherwise) if
        `RedirectTrailingSlash` is enabled. Paths are cleaned with `cleanPath` first,
        so `/a/../b//c/` becomes `/b/c/`.

        If the path exists for another method and `HandleMethodNotAllowed` is set, the
        engine answers 405 with an `Allow` header instead of 404.
    ''')
    files["Makefile"] = go(r'''
        GO ?= go

        .PHONY: test vet bench

        test:
            $(GO) test -race ./...

        vet:
            $(GO) vet ./...

        bench:
            $(GO) test -run NONE -bench . -benchmem ./...
    ''')
    files["gin.go"] = go(r'''
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
    ''')
    files["context.go"] = go(r'''
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
    ''')
    files["tree.go"] = go(r'''
        package gin

        import "strings"

        type nodeType uint8

        const (
            static nodeType = iota
            root
            param
            catchAll
        )

        type node struct {
            path      string
            indices   string
            wildChild bool
            nType     nodeType
            priority  uint32
            children  []*node
            handlers  HandlersChain
            fullPath  string
        }

        type nodeValue struct {
            handlers HandlersChain
            params   *Params
            tsr      bool
            fullPath string
        }

        func longestCommonPrefix(a, b string) int {
            i := 0
            max := len(a)
            if len(b) < max {
                max = len(b)
            }
            for i < max && a[i] == b[i] {
                i++
            }
            return i
        }

        func countParams(path string) uint16 {
            n := strings.Count(path, ":") + strings.Count(path, "*")
            return uint16(n)
        }

        // findWildcard returns the first wildcard segment and its index.
        func findWildcard(path string) (wildcard string, i int, valid bool) {
            for start, c := range []byte(path) {
                if c != ':' && c != '*' {
                    continue
                }
                valid = true
                for end, c := range []byte(path[start+1:]) {
                    switch c {
                    case '/':
                        return path[start : start+1+end], start, valid
                    case ':', '*':
                        valid = false
                    }
                }
                return path[start:], start, valid
            }
            return "", -1, false
        }

        // addRoute adds a node with the given handlers to the path.
        func (n *node) addRoute(path string, handlers HandlersChain) {
            fullPath := path
            n.priority++
            if len(n.path) == 0 && len(n.children) == 0 {
                n.insertChild(path, fullPath, handlers)
                n.nType = root
                return
            }
        walk:
            for {
                i := longestCommonPrefix(path, n.path)
                if i < len(n.path) {
                    child := node{
                        path:      n.path[i:],
                        wildChild: n.wildChild,
                        indices:   n.indices,
                        children:  n.children,
                        handlers:  n.handlers,
                        priority:  n.priority - 1,
                        fullPath:  n.fullPath,
                    }
                    n.children = []*node{&child}
                    n.indices = string([]byte{n.path[i]})
                    n.path = path[:i]
                    n.handlers = nil
                    n.wildChild = false
                }
                if i < len(path) {
                    path = path[i:]
                    c := path[0]
                    if n.wildChild {
                        n = n.children[0]
                        n.priority++
                        if len(path) >= len(n.path) && n.path == path[:len(n.path)] && n.nType != catchAll {
                            continue walk
                        }
                        panic("'" + path + "' conflicts with existing wildcard '" + n.path + "' in '" + fullPath + "'")
                    }
                    for idx := 0; idx < len(n.indices); idx++ {
                        if c == n.indices[idx] {
                            n = n.children[idx]
                            continue walk
                        }
                    }
                    if c != ':' && c != '*' {
                        n.indices += string([]byte{c})
                        child := &node{fullPath: fullPath}
                        n.children = append(n.children, child)
                        n = child
                    }
                    n.insertChild(path, fullPath, handlers)
                    return
                }
                if n.handlers != nil {
                    panic("handlers are already registered for path '" + fullPath + "'")
                }
                n.handlers = handlers
                n.fullPath = fullPath
                return
            }
        }

        func (n *node) insertChild(path string, fullPath string, handlers HandlersChain) {
            for {
                wildcard, i, valid := findWildcard(path)
                if i < 0 {
                    break
                }
                if !valid || len(wildcard) < 2 {
                    panic("invalid wildcard in path '" + fullPath + "'")
                }
                if wildcard[0] == ':' {
                    if i > 0 {
                        n.path = path[:i]
                        path = path[i:]
                    }
                    child := &node{nType: param, path: wildcard, fullPath: fullPath}
                    n.children = []*node{child}
                    n.wildChild = true
                    n = child
                    n.priority++
                    if len(wildcard) < len(path) {
                        path = path[len(wildcard):]
                        next := &node{priority: 1, fullPath: fullPath}
                        n.children = []*node{next}
                        n = next
                        continue
                    }
                    n.handlers = handlers
                    return
                }
                if i+len(wildcard) != len(path) {
                    panic("catch-all routes are only allowed at the end of the path in '" + fullPath + "'")
                }
                n.path = path[:i]
                child := &node{wildChild: true, nType: catchAll, fullPath: fullPath}
                n.children = []*node{child}
                n.indices = string('/')
                child.children = []*node{{path: path[i:], nType: catchAll, handlers: handlers, priority: 1, fullPath: fullPath}}
                return
            }
            n.path = path
            n.handlers = handlers
            n.fullPath = fullPath
        }

        // getValue returns the handlers registered for path; tsr reports whether a
        // redirect to the same path with(out) a trailing slash would succeed.
        func (n *node) getValue(path string, params *Params) (value nodeValue) {
        walk:
            for {
                prefix := n.path
                if len(path) > len(prefix) {
                    if path[:len(prefix)] == prefix {
                        path = path[len(prefix):]
                        if !n.wildChild {
                            idxc := path[0]
                            for i, c := range []byte(n.indices) {
                                if c == idxc {
                                    n = n.children[i]
                                    continue walk
                                }
                            }
                            value.tsr = path == "/" && n.handlers != nil
                            return
                        }
                        n = n.children[0]
                        switch n.nType {
                        case param:
                            end := 0
                            for end < len(path) && path[end] != '/' {
                                end++
                            }
                            if params != nil {
                                *params = append(*params, Param{Key: n.path[1:], Value: path[:end]})
                            }
                            if end < len(path) {
                                if len(n.children) > 0 {
                                    path = path[end:]
                                    n = n.children[0]
                                    continue walk
                                }
                                value.tsr = len(path) == end+1
                                return
                            }
                            value.handlers = n.handlers
                            value.fullPath = n.fullPath
                            return
                        case catchAll:
                            if params != nil {
                                *params = append(*params, Param{Key: n.path[2:], Value: path})
                            }
                            value.handlers = n.handlers
                            value.fullPath = n.fullPath
                            return
                        }
                    }
                }
                if path == prefix {
                    value.handlers = n.handlers
                    value.fullPath = n.fullPath
                    if value.handlers == nil && path == "/" && n.wildChild && n.nType != root {
                        value.tsr = true
                    }
                    return
                }
                value.tsr = path == "/" || (len(prefix) == len(path)+1 && prefix[len(path)] == '/' && path == prefix[:len(prefix)-1] && n.handlers != nil)
                return
            }
        }
    ''')
    files["routergroup.go"] = go(r'''
        package gin

        import (
            "net/http"
            "path"
        )

        // RouterGroup groups routes under a common path prefix and middleware.
        type RouterGroup struct {
            Handlers HandlersChain
            basePath string
            engine   *Engine
            root     bool
        }

        // Use adds middleware to the group.
        func (group *RouterGroup) Use(middleware ...HandlerFunc) {
            group.Handlers = append(group.Handlers, middleware...)
        }

        // Group creates a new router group sharing the prefix and middleware.
        func (group *RouterGroup) Group(relativePath string, handlers ...HandlerFunc) *RouterGroup {
            return &RouterGroup{
                Handlers: group.combineHandlers(handlers),
                basePath: group.calculateAbsolutePath(relativePath),
                engine:   group.engine,
            }
        }

        // Handle registers a new request handle and middleware with the given path and method.
        func (group *RouterGroup) Handle(httpMethod, relativePath string, handlers ...HandlerFunc) {
            absolutePath := group.calculateAbsolutePath(relativePath)
            handlers = group.combineHandlers(handlers)
            group.engine.addRoute(httpMethod, absolutePath, handlers)
        }

        // GET is a shortcut for Handle("GET", path, handlers...).
        func (group *RouterGroup) GET(relativePath string, handlers ...HandlerFunc) {
            group.Handle(http.MethodGet, relativePath, handlers...)
        }

        // POST is a shortcut for Handle("POST", path, handlers...).
        func (group *RouterGroup) POST(relativePath string, handlers ...HandlerFunc) {
            group.Handle(http.MethodPost, relativePath, handlers...)
        }

        // DELETE is a shortcut for Handle("DELETE", path, handlers...).
        func (group *RouterGroup) DELETE(relativePath string, handlers ...HandlerFunc) {
            group.Handle(http.MethodDelete, relativePath, handlers...)
        }

        func (group *RouterGroup) combineHandlers(handlers HandlersChain) HandlersChain {
            finalSize := len(group.Handlers) + len(handlers)
            assert1(finalSize < int(abortIndex), "too many handlers")
            mergedHandlers := make(HandlersChain, finalSize)
            copy(mergedHandlers, group.Handlers)
            copy(mergedHandlers[len(group.Handlers):], handlers)
            return mergedHandlers
        }

        func (group *RouterGroup) calculateAbsolutePath(relativePath string) string {
            return joinPaths(group.basePath, relativePath)
        }

        func joinPaths(absolutePath, relativePath string) string {
            if relativePath == "" {
                return absolutePath
            }
            finalPath := path.Join(absolutePath, relativePath)
            if lastChar(relativePath) == '/' && lastChar(finalPath) != '/' {
                return finalPath + "/"
            }
            return finalPath
        }

        func lastChar(str string) uint8 {
            if str == "" {
                panic("the length of the string can't be 0")
            }
            return str[len(str)-1]
        }
    ''')
    files["path.go"] = go(r'''
        package gin

        // cleanPath is the URL version of path.Clean: it returns a canonical URL
        // path for p, eliminating . and .. elements and repeated slashes.
        //
        //  1. Replace multiple slashes with a single slash.
        //  2. Eliminate each . path name element (the current directory).
        //  3. Eliminate each inner .. path name element and the non-.. element before it.
        //  4. Eliminate .. elements that begin a rooted path.
        //
        // A trailing slash is kept.
        func cleanPath(p string) string {
            const stackBufSize = 128
            if p == "" {
                return "/"
            }
            buf := make([]byte, 0, stackBufSize)
            n := len(p)
            r := 1
            w := 1
            if p[0] != '/' {
                r = 0
                buf = bufApp(buf, p, 0, '/')
            }
            trailing := n > 1 && p[n-1] == '/'
            for r < n {
                switch {
                case p[r] == '/':
                    r++
                case p[r] == '.' && r+1 == n:
                    trailing = true
                    r++
                case p[r] == '.' && p[r+1] == '/':
                    r += 2
                case p[r] == '.' && p[r+1] == '.' && (r+2 == n || p[r+2] == '/'):
                    r += 3
                    if w > 1 {
                        w--
                        for w > 1 && buf[w] != '/' {
                            w--
                        }
                    }
                default:
                    if w > 1 {
                        buf = bufApp(buf, p, w, '/')
                        w++
                    }
                    for r < n && p[r] != '/' {
                        buf = bufApp(buf, p, w, p[r])
                        w++
                        r++
                    }
                }
            }
            if trailing && w > 1 {
                buf = bufApp(buf, p, w, '/')
                w++
            }
            if len(buf) == 0 {
                return p[:w]
            }
            return string(buf[:w])
        }

        // bufApp lazily allocates the buffer only when the cleaned path differs.
        func bufApp(buf []byte, s string, w int, c byte) []byte {
            if len(buf) == 0 {
                if s[w] == c {
                    return buf
                }
                buf = make([]byte, len(s)+1)
                copy(buf, s[:w])
            }
            buf[w] = c
            return buf
        }
    ''')
    files["errors.go"] = go(r'''
        package gin

        import (
            "fmt"
            "strings"
        )

        // ErrorType is an unsigned 64-bit error code as defined in the gin-lite spec.
        type ErrorType uint64

        const (
            ErrorTypeBind    ErrorType = 1 << 63
            ErrorTypeRender  ErrorType = 1 << 62
            ErrorTypePrivate ErrorType = 1 << 0
            ErrorTypeAny     ErrorType = 1<<64 - 1
        )

        // Error represents an error attached to a request context.
        type Error struct {
            Err  error
            Type ErrorType
            Meta any
        }

        type errorMsgs []*Error

        func (msg *Error) Error() string {
            return msg.Err.Error()
        }

        // Error attaches an error to the current context.
        func (c *Context) Error(err error) *Error {
            parsedError := &Error{Err: err, Type: ErrorTypePrivate}
            c.Errors = append(c.Errors, parsedError)
            return parsedError
        }

        // ByType returns a filtered copy of the errors by the given type.
        func (a errorMsgs) ByType(typ ErrorType) errorMsgs {
            if len(a) == 0 {
                return nil
            }
            var result errorMsgs
            for _, msg := range a {
                if msg.Type&typ > 0 {
                    result = append(result, msg)
                }
            }
            return result
        }

        // Last returns the last error in the slice or nil.
        func (a errorMsgs) Last() *Error {
            if length := len(a); length > 0 {
                return a[length-1]
            }
            return nil
        }

        func (a errorMsgs) String() string {
            var buffer strings.Builder
            for i, msg := range a {
                fmt.Fprintf(&buffer, "Error #%02d: %s\n", i+1, msg.Err)
            }
            return buffer.String()
        }
    ''')
    files["response_writer.go"] = go(r'''
        package gin

        import (
            "log"
            "net/http"
        )

        const (
            noWritten     = -1
            defaultStatus = http.StatusOK
        )

        // ResponseWriter extends http.ResponseWriter with status and size tracking.
        type ResponseWriter interface {
            http.ResponseWriter
            Status() int
            Size() int
            Written() bool
            WriteHeaderNow()
        }

        type responseWriter struct {
            http.ResponseWriter
            size   int
            status int
        }

        func (w *responseWriter) reset(writer http.ResponseWriter) {
            w.ResponseWriter = writer
            w.size = noWritten
            w.status = defaultStatus
        }

        func (w *responseWriter) WriteHeader(code int) {
            if code > 0 && w.status != code {
                if w.Written() {
                    log.Printf("[WARNING] Headers were already written. Wanted to override status code %d with %d", w.status, code)
                    return
                }
                w.status = code
            }
        }

        func (w *responseWriter) WriteHeaderNow() {
            if !w.Written() {
                w.size = 0
                w.ResponseWriter.WriteHeader(w.status)
            }
        }

        func (w *responseWriter) Write(data []byte) (n int, err error) {
            w.WriteHeaderNow()
            n, err = w.ResponseWriter.Write(data)
            w.size += n
            return
        }

        func (w *responseWriter) Status() int {
            return w.status
        }

        func (w *responseWriter) Size() int {
            return w.size
        }

        func (w *responseWriter) Written() bool {
            return w.size != noWritten
        }
    ''')
    files["middleware/logger.go"] = go(r'''
        package middleware

        import (
            "fmt"
            "io"
            "os"
            "time"

            gin "github.com/acme/gin-lite"
        )

        // LoggerConfig defines the config for the Logger middleware.
        type LoggerConfig struct {
            Formatter LogFormatter
            Output    io.Writer
            SkipPaths []string
        }

        // LogFormatter gives the signature of the formatter function passed to LoggerWithConfig.
        type LogFormatter func(params LogFormatterParams) string

        // LogFormatterParams is the structure any formatter gets when logging.
        type LogFormatterParams struct {
            TimeStamp  time.Time
            StatusCode int
            Latency    time.Duration
            ClientIP   string
            Method     string
            Path       string
        }

        var defaultLogFormatter = func(param LogFormatterParams) string {
            return fmt.Sprintf("[GIN-LITE] %v | %3d | %13v | %15s | %-7s %#v\n",
                param.TimeStamp.Format("2006/01/02 - 15:04:05"),
                param.StatusCode,
                param.Latency,
                param.ClientIP,
                param.Method,
                param.Path,
            )
        }

        // Logger writes one access-log line per request to stdout.
        func Logger() gin.HandlerFunc {
            return LoggerWithConfig(LoggerConfig{})
        }

        // LoggerWithConfig returns a Logger middleware with the given config.
        func LoggerWithConfig(conf LoggerConfig) gin.HandlerFunc {
            formatter := conf.Formatter
            if formatter == nil {
                formatter = defaultLogFormatter
            }
            out := conf.Output
            if out == nil {
                out = os.Stdout
            }
            skip := make(map[string]struct{}, len(conf.SkipPaths))
            for _, path := range conf.SkipPaths {
                skip[path] = struct{}{}
            }
            return func(c *gin.Context) {
                start := time.Now()
                path := c.Request.URL.Path
                c.Next()
                if _, ok := skip[path]; ok {
                    return
                }
                param := LogFormatterParams{
                    TimeStamp:  time.Now(),
                    StatusCode: c.Writer.Status(),
                    Latency:    time.Since(start),
                    ClientIP:   c.ClientIP(),
                    Method:     c.Request.Method,
                    Path:       path,
                }
                fmt.Fprint(out, formatter(param))
            }
        }
    ''')
    files["middleware/recovery.go"] = go(r'''
        package middleware

        import (
            "errors"
            "fmt"
            "io"
            "log"
            "net"
            "net/http"
            "os"
            "runtime"
            "strings"
            "syscall"

            gin "github.com/acme/gin-lite"
        )

        // RecoveryFunc defines the function passed to CustomRecovery.
        type RecoveryFunc func(c *gin.Context, err any)

        // Recovery recovers from any panic and writes a 500 if there was one.
        func Recovery() gin.HandlerFunc {
            return CustomRecoveryWithWriter(os.Stderr, defaultHandleRecovery)
        }

        // CustomRecovery is like Recovery but calls handle instead of writing a 500.
        func CustomRecovery(handle RecoveryFunc) gin.HandlerFunc {
            return CustomRecoveryWithWriter(os.Stderr, handle)
        }

        // CustomRecoveryWithWriter returns a recovery middleware that logs to out.
        func CustomRecoveryWithWriter(out io.Writer, handle RecoveryFunc) gin.HandlerFunc {
            logger := log.New(out, "\n\n\x1b[31m", log.LstdFlags)
            return func(c *gin.Context) {
                defer func() {
                    if err := recover(); err != nil {
                        brokenPipe := isBrokenPipe(err)
                        logger.Printf("[Recovery] panic recovered:\n%s\n%s", err, stack(3))
                        if brokenPipe {
                            c.Error(err.(error))
                            c.Abort()
                            return
                        }
                        handle(c, err)
                    }
                }()
                c.Next()
            }
        }

        // isBrokenPipe checks for a connection reset by the client; writing a
        // status code to such a connection is pointless.
        func isBrokenPipe(err any) bool {
            ne, ok := err.(*net.OpError)
            if !ok {
                return false
            }
            var se *os.SyscallError
            if errors.As(ne, &se) {
                seStr := strings.ToLower(se.Error())
                return strings.Contains(seStr, "broken pipe") || strings.Contains(seStr, "connection reset by peer")
            }
            return errors.Is(ne.Err, syscall.EPIPE)
        }

        func defaultHandleRecovery(c *gin.Context, _ any) {
            c.AbortWithStatus(http.StatusInternalServerError)
        }

        func stack(skip int) string {
            var lines []string
            for i := skip; ; i++ {
                pc, file, line, ok := runtime.Caller(i)
                if !ok {
                    break
                }
                lines = append(lines, fmt.Sprintf("%s:%d (0x%x)", file, line, pc))
            }
            return strings.Join(lines, "\n")
        }
    ''')
    files["middleware/cors.go"] = go(r'''
        package middleware

        import (
            "net/http"
            "strconv"
            "strings"

            gin "github.com/acme/gin-lite"
        )

        // CORSConfig configures the CORS middleware.
        type CORSConfig struct {
            AllowOrigins     []string
            AllowMethods     []string
            AllowHeaders     []string
            AllowCredentials bool
            MaxAge           int
        }

        // CORS answers preflight requests and decorates simple requests.
        func CORS(config CORSConfig) gin.HandlerFunc {
            methods := strings.Join(config.AllowMethods, ",")
            headers := strings.Join(config.AllowHeaders, ",")
            return func(c *gin.Context) {
                origin := c.Request.Header.Get("Origin")
                if origin == "" {
                    c.Next()
                    return
                }
                if !allowOrigin(config.AllowOrigins, origin) {
                    c.AbortWithStatus(http.StatusForbidden)
                    return
                }
                header := c.Writer.Header()
                header.Set("Access-Control-Allow-Origin", responseOrigin(config, origin))
                if config.AllowCredentials {
                    header.Set("Access-Control-Allow-Credentials", "true")
                }
                if c.Request.Method == http.MethodOptions {
                    header.Set("Access-Control-Allow-Methods", methods)
                    header.Set("Access-Control-Allow-Headers", headers)
                    if config.MaxAge > 0 {
                        header.Set("Access-Control-Max-Age", strconv.Itoa(config.MaxAge))
                    }
                    c.AbortWithStatus(http.StatusNoContent)
                    return
                }
                c.Next()
            }
        }

        func allowOrigin(allowed []string, origin string) bool {
            for _, candidate := range allowed {
                if candidate == "*" || strings.EqualFold(candidate, origin) {
                    return true
                }
            }
            return false
        }

        func responseOrigin(config CORSConfig, origin string) string {
            for _, candidate := range config.AllowOrigins {
                if candidate == "*" {
                    return "*"
                }
            }
            return origin
        }
    ''')
    files["binding/binding.go"] = go(r'''
        // Package binding decodes request bodies into Go values.
        package binding

        import "net/http"

        // Binding describes the interface which needs to be implemented for binding
        // the data present in the request such as JSON request body or form values.
        type Binding interface {
            Name() string
            Bind(*http.Request, any) error
        }

        // Content-type MIME values understood by Default.
        const (
            MIMEJSON     = "application/json"
            MIMEPOSTForm = "application/x-www-form-urlencoded"
        )

        // These implement the Binding interface.
        var (
            JSON = jsonBinding{}
            Form = formBinding{}
        )

        // Default returns the appropriate Binding instance based on the HTTP method
        // and the content type.
        func Default(method, contentType string) Binding {
            if method == http.MethodGet {
                return Form
            }
            switch contentType {
            case MIMEJSON:
                return JSON
            default:
                return Form
            }
        }
    ''')
    files["binding/json.go"] = go(r'''
        package binding

        import (
            "encoding/json"
            "errors"
            "io"
            "net/http"
        )

        // EnableDecoderUseNumber makes the JSON decoder keep numbers as json.Number.
        var EnableDecoderUseNumber = false

        type jsonBinding struct{}

        func (jsonBinding) Name() string {
            return "json"
        }

        func (jsonBinding) Bind(req *http.Request, obj any) error {
            if req == nil || req.Body == nil {
                return errors.New("invalid request")
            }
            return decodeJSON(req.Body, obj)
        }

        func decodeJSON(r io.Reader, obj any) error {
            decoder := json.NewDecoder(r)
            if EnableDecoderUseNumber {
                decoder.UseNumber()
            }
            if err := decoder.Decode(obj); err != nil {
                return err
            }
            return validate(obj)
        }
    ''')
    files["binding/form.go"] = go(r'''
        package binding

        import (
            "errors"
            "net/http"
            "reflect"
            "strconv"
        )

        type formBinding struct{}

        func (formBinding) Name() string {
            return "form"
        }

        func (formBinding) Bind(req *http.Request, obj any) error {
            if err := req.ParseForm(); err != nil {
                return err
            }
            if err := mapForm(obj, req.Form); err != nil {
                return err
            }
            return validate(obj)
        }

        // mapForm copies form values into the struct fields tagged with `form:"name"`.
        func mapForm(ptr any, form map[string][]string) error {
            value := reflect.ValueOf(ptr)
            if value.Kind() != reflect.Pointer || value.Elem().Kind() != reflect.Struct {
                return errors.New("binding: form target must be a pointer to a struct")
            }
            value = value.Elem()
            typ := value.Type()
            for i := 0; i < typ.NumField(); i++ {
                field := typ.Field(i)
                name := field.Tag.Get("form")
                if name == "" || name == "-" {
                    continue
                }
                values, ok := form[name]
                if !ok || len(values) == 0 {
                    continue
                }
                if err := setWithProperType(values, value.Field(i)); err != nil {
                    return err
                }
            }
            return nil
        }

        func setWithProperType(values []string, field reflect.Value) error {
            switch field.Kind() {
            case reflect.Slice:
                slice := reflect.MakeSlice(field.Type(), len(values), len(values))
                for i, v := range values {
                    if err := setWithProperType([]string{v}, slice.Index(i)); err != nil {
                        return err
                    }
                }
                field.Set(slice)
            case reflect.Int, reflect.Int64:
                n, err := strconv.ParseInt(values[0], 10, 64)
                if err != nil {
                    return err
                }
                field.SetInt(n)
            case reflect.Bool:
                b, err := strconv.ParseBool(values[0])
                if err != nil {
                    return err
                }
                field.SetBool(b)
            default:
                field.SetString(values[0])
            }
            return nil
        }

        func validate(obj any) error {
            value := reflect.Indirect(reflect.ValueOf(obj))
            if value.Kind() != reflect.Struct {
                return nil
            }
            for i := 0; i < value.NumField(); i++ {
                if value.Type().Field(i).Tag.Get("binding") == "required" && value.Field(i).IsZero() {
                    return errors.New("binding: required field " + value.Type().Field(i).Name + " is empty")
                }
            }
            return nil
        }
    ''')
    files["render/render.go"] = go(r'''
        // Package render writes response bodies.
        package render

        import "net/http"

        // Render is implemented by JSON, SecureJSON and String.
        type Render interface {
            Render(http.ResponseWriter) error
            WriteContentType(w http.ResponseWriter)
        }

        func writeContentType(w http.ResponseWriter, value []string) {
            header := w.Header()
            if val := header["Content-Type"]; len(val) == 0 {
                header["Content-Type"] = value
            }
        }
    ''')
    files["render/json.go"] = go(r'''
        package render

        import (
            "bytes"
            "encoding/json"
            "fmt"
            "net/http"

            "github.com/acme/gin-lite/internal/bytesconv"
        )

        var jsonContentType = []string{"application/json; charset=utf-8"}

        // JSON contains the given interface object.
        type JSON struct {
            Data any
        }

        // SecureJSON contains the given interface object and its prefix.
        type SecureJSON struct {
            Prefix string
            Data   any
        }

        // String renders a formatted plain-text body.
        type String struct {
            Format string
            Data   []any
        }

        func (r JSON) Render(w http.ResponseWriter) error {
            return WriteJSON(w, r.Data)
        }

        func (r JSON) WriteContentType(w http.ResponseWriter) {
            writeContentType(w, jsonContentType)
        }

        // WriteJSON marshals obj and writes it with the JSON content type.
        func WriteJSON(w http.ResponseWriter, obj any) error {
            writeContentType(w, jsonContentType)
            jsonBytes, err := json.Marshal(obj)
            if err != nil {
                return err
            }
            _, err = w.Write(jsonBytes)
            return err
        }

        func (r SecureJSON) Render(w http.ResponseWriter) error {
            r.WriteContentType(w)
            jsonBytes, err := json.Marshal(r.Data)
            if err != nil {
                return err
            }
            if bytes.HasPrefix(jsonBytes, bytesconv.StringToBytes("[")) && bytes.HasSuffix(jsonBytes, bytesconv.StringToBytes("]")) {
                if _, err = w.Write(bytesconv.StringToBytes(r.Prefix)); err != nil {
                    return err
                }
            }
            _, err = w.Write(jsonBytes)
            return err
        }

        func (r SecureJSON) WriteContentType(w http.ResponseWriter) {
            writeContentType(w, jsonContentType)
        }

        func (r String) Render(w http.ResponseWriter) error {
            r.WriteContentType(w)
            if len(r.Data) > 0 {
                _, err := fmt.Fprintf(w, r.Format, r.Data...)
                return err
            }
            _, err := w.Write(bytesconv.StringToBytes(r.Format))
            return err
        }

        func (r String) WriteContentType(w http.ResponseWriter) {
            writeContentType(w, []string{"text/plain; charset=utf-8"})
        }
    ''')
    files["internal/bytesconv/bytesconv.go"] = go(r'''
        // Package bytesconv converts between strings and byte slices without copying.
        package bytesconv

        import "unsafe"

        // StringToBytes converts a string to a byte slice without a memory allocation.
        func StringToBytes(s string) []byte {
            return unsafe.Slice(unsafe.StringData(s), len(s))
        }

        // BytesToString converts a byte slice to a string without a memory allocation.
        func BytesToString(b []byte) string {
            return unsafe.String(unsafe.SliceData(b), len(b))
        }
    ''')
    files["examples/basic/main.go"] = go(r'''
        package main

        import (
            "net/http"

            gin "github.com/acme/gin-lite"
            "github.com/acme/gin-lite/middleware"
        )

        type loginForm struct {
            User     string `form:"user" binding:"required"`
            Password string `form:"password" binding:"required"`
        }

        func main() {
            r := gin.Default(middleware.Logger(), middleware.Recovery())
            r.GET("/ping", func(c *gin.Context) {
                c.String(http.StatusOK, "pong")
            })
            api := r.Group("/api/v1")
            api.GET("/users/:id", func(c *gin.Context) {
                c.JSON(http.StatusOK, gin.H{"id": c.Param("id"), "verbose": c.DefaultQuery("verbose", "false")})
            })
            api.POST("/login", func(c *gin.Context) {
                var form loginForm
                if err := c.ShouldBindJSON(&form); err != nil {
                    c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
                    return
                }
                c.JSON(http.StatusOK, gin.H{"status": "you are logged in"})
            })
            r.Run(":8080")
        }
    ''')
    files["gin_test.go"] = go(r'''
        package gin

        import (
            "net/http"
            "net/http/httptest"
            "testing"
        )

        func performRequest(r http.Handler, method, path string) *httptest.ResponseRecorder {
            req := httptest.NewRequest(method, path, nil)
            w := httptest.NewRecorder()
            r.ServeHTTP(w, req)
            return w
        }

        func TestEngineNoRoute(t *testing.T) {
            router := New()
            router.NoRoute(func(c *Context) { c.String(http.StatusNotFound, "custom 404") })
            w := performRequest(router, http.MethodGet, "/missing")
            if w.Code != http.StatusNotFound || w.Body.String() != "custom 404" {
                t.Fatalf("unexpected response %d %q", w.Code, w.Body.String())
            }
        }

        func TestEngineMethodNotAllowed(t *testing.T) {
            router := New()
            router.HandleMethodNotAllowed = true
            router.POST("/items", func(c *Context) {})
            w := performRequest(router, http.MethodGet, "/items")
            if w.Code != http.StatusMethodNotAllowed {
                t.Fatalf("expected 405, got %d", w.Code)
            }
            if allow := w.Header().Get("Allow"); allow != "POST" {
                t.Fatalf("expected Allow: POST, got %q", allow)
            }
        }

        func TestEngineRedirectTrailingSlash(t *testing.T) {
            router := New()
            router.GET("/path/", func(c *Context) {})
            w := performRequest(router, http.MethodGet, "/path")
            if w.Code != http.StatusMovedPermanently {
                t.Fatalf("expected 301, got %d", w.Code)
            }
        }

        func TestResolveAddress(t *testing.T) {
            if got := resolveAddress(nil); got != ":8080" {
                t.Fatalf("default address: %q", got)
            }
        }
    ''')
    files["context_test.go"] = go(r'''
        package gin

        import (
            "net/http"
            "net/http/httptest"
            "testing"
        )

        func newTestContext(req *http.Request) (*Context, *httptest.ResponseRecorder) {
            w := httptest.NewRecorder()
            engine := New()
            c := engine.allocateContext()
            c.writermem.reset(w)
            c.Request = req
            c.reset()
            return c, w
        }

        func TestContextClientIP(t *testing.T) {
            req := httptest.NewRequest(http.MethodGet, "/", nil)
            req.Header.Set("X-Forwarded-For", " 10.0.0.1 , 10.0.0.2")
            req.Header.Set("X-Real-Ip", "10.0.0.3")
            c, _ := newTestContext(req)
            if ip := c.ClientIP(); ip != "10.0.0.1" {
                t.Fatalf("expected %q, got %q", "10.0.0.1", ip)
            }
        }

        func TestContextAbortWithStatus(t *testing.T) {
            c, w := newTestContext(httptest.NewRequest(http.MethodGet, "/", nil))
            c.AbortWithStatus(http.StatusUnauthorized)
            if !c.IsAborted() || w.Code != http.StatusUnauthorized {
                t.Fatalf("abort did not write 401")
            }
        }

        func TestContextSecureJSON(t *testing.T) {
            c, w := newTestContext(httptest.NewRequest(http.MethodGet, "/", nil))
            c.SecureJSON(http.StatusOK, []string{"foo", "bar"})
            if body := w.Body.String(); body != `while(1);["foo","bar"]` {
                t.Fatalf("unexpected body %q", body)
            }
        }

        func TestContextDefaultQuery(t *testing.T) {
            c, _ := newTestContext(httptest.NewRequest(http.MethodGet, "/?page=2", nil))
            if got := c.DefaultQuery("page", "1"); got != "2" {
                t.Fatalf("page: %q", got)
            }
            if got := c.DefaultQuery("size", "20"); got != "20" {
                t.Fatalf("size: %q", got)
            }
        }
    ''')
    files["tree_test.go"] = go(r'''
        package gin

        import "testing"

        func fakeHandler(string) HandlersChain {
            return HandlersChain{func(c *Context) {}}
        }

        func TestTreeAddAndGet(t *testing.T) {
            tree := &node{}
            routes := []string{"/hi", "/contact", "/users/:id", "/users/:id/posts", "/static/*filepath"}
            for _, route := range routes {
                tree.addRoute(route, fakeHandler(route))
            }
            params := make(Params, 0, 4)
            value := tree.getValue("/users/42/posts", &params)
            if value.handlers == nil || params[0].Value != "42" {
                t.Fatalf("route not found or wrong param: %+v", params)
            }
        }

        func TestTreeWildcardConflict(t *testing.T) {
            defer func() {
                if recover() == nil {
                    t.Fatal("expected a panic for conflicting wildcards")
                }
            }()
            tree := &node{}
            tree.addRoute("/users/:id", fakeHandler("a"))
            tree.addRoute("/users/:name", fakeHandler("b"))
        }

        func TestTreeTrailingSlashRedirect(t *testing.T) {
            tree := &node{}
            for _, route := range []string{"/hi", "/b/", "/admin/:tool/"} {
                tree.addRoute(route, fakeHandler(route))
            }
            for _, path := range []string{"/hi/", "/b", "/admin/config"} {
                if value := tree.getValue(path, nil); !value.tsr {
                    t.Errorf("expected tsr for %q", path)
                }
            }
        }
    ''')
    files["path_test.go"] = go(r'''
        package gin

        import "testing"

        var cleanTests = []struct {
            path, result string
        }{
            {"", "/"},
            {"/", "/"},
            {"/abc/", "/abc/"},
            {"/a/b/c", "/a/b/c"},
            {"//", "/"},
            {"/abc//def//ghi", "/abc/def/ghi"},
            {"/a/./b/", "/a/b/"},
            {"/abc/def/..", "/abc/"},
            {"/abc/def/../../..", "/"},
            {"abc/../../././../def", "/def"},
        }

        func TestCleanPath(t *testing.T) {
            for _, test := range cleanTests {
                if s := cleanPath(test.path); s != test.result {
                    t.Errorf("cleanPath(%q) = %q, want %q", test.path, s, test.result)
                }
            }
        }
    ''')
    files["routergroup_test.go"] = go(r'''
        package gin

        import "testing"

        func TestRouterGroupBasePath(t *testing.T) {
            router := New()
            v1 := router.Group("/v1")
            admin := v1.Group("/admin/")
            if admin.basePath != "/v1/admin/" {
                t.Fatalf("basePath = %q", admin.basePath)
            }
        }

        func TestJoinPaths(t *testing.T) {
            cases := map[[2]string]string{
                {"/", ""}:        "/",
                {"/a", "b/"}:     "/a/b/",
                {"/a/", "/b"}:    "/a/b",
                {"/a", "../b"}:   "/b",
            }
            for in, want := range cases {
                if got := joinPaths(in[0], in[1]); got != want {
                    t.Errorf("joinPaths(%q, %q) = %q, want %q", in[0], in[1], got, want)
                }
            }
        }
    ''')
    files["middleware/recovery_test.go"] = go(r'''
        package middleware

        import (
            "bytes"
            "net"
            "net/http"
            "net/http/httptest"
            "os"
            "syscall"
            "testing"

            gin "github.com/acme/gin-lite"
        )

        func TestRecoveryWrites500(t *testing.T) {
            buffer := new(bytes.Buffer)
            router := gin.New()
            router.Use(CustomRecoveryWithWriter(buffer, defaultHandleRecovery))
            router.GET("/boom", func(_ *gin.Context) { panic("oops") })
            w := httptest.NewRecorder()
            router.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/boom", nil))
            if w.Code != http.StatusInternalServerError {
                t.Fatalf("expected 500, got %d", w.Code)
            }
        }

        func TestRecoveryPanicWithBrokenPipe(t *testing.T) {
            expectErrnos := []syscall.Errno{syscall.EPIPE, syscall.ECONNRESET}
            for _, errno := range expectErrnos {
                buffer := new(bytes.Buffer)
                router := gin.New()
                router.Use(CustomRecoveryWithWriter(buffer, defaultHandleRecovery))
                router.GET("/recovery", func(c *gin.Context) {
                    c.Header("X-Test", "Value")
                    panic(&net.OpError{Err: &os.SyscallError{Err: errno}})
                })
                w := httptest.NewRecorder()
                router.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/recovery", nil))
                if w.Code != http.StatusOK {
                    t.Errorf("errno %v: status must stay untouched, got %d", errno, w.Code)
                }
            }
        }
    ''')
    files["middleware/logger_test.go"] = go(r'''
        package middleware

        import (
            "bytes"
            "net/http"
            "net/http/httptest"
            "strings"
            "testing"

            gin "github.com/acme/gin-lite"
        )

        func TestLoggerWithConfigSkipPaths(t *testing.T) {
            buffer := new(bytes.Buffer)
            router := gin.New()
            router.Use(LoggerWithConfig(LoggerConfig{Output: buffer, SkipPaths: []string{"/healthz"}}))
            router.GET("/healthz", func(c *gin.Context) {})
            router.GET("/users", func(c *gin.Context) {})
            for _, path := range []string{"/healthz", "/users"} {
                router.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
            }
            if strings.Contains(buffer.String(), "/healthz") {
                t.Fatalf("skipped path was logged: %s", buffer.String())
            }
            if !strings.Contains(buffer.String(), "/users") {
                t.Fatalf("request was not logged")
            }
        }
    ''')
    files["binding/binding_test.go"] = go(r'''
        package binding

        import (
            "net/http"
            "net/http/httptest"
            "strings"
            "testing"
        )

        type sample struct {
            Name  string   `form:"name" binding:"required"`
            Tags  []string `form:"tag"`
            Count int      `form:"count"`
        }

        func TestDefaultBinding(t *testing.T) {
            if Default(http.MethodPost, MIMEJSON) != JSON {
                t.Fatal("POST + application/json should pick JSON")
            }
            if Default(http.MethodGet, MIMEJSON) != Form {
                t.Fatal("GET should always pick Form")
            }
        }

        func TestFormBindingSlice(t *testing.T) {
            req := httptest.NewRequest(http.MethodGet, "/?name=x&tag=a&tag=b&count=3", nil)
            var obj sample
            if err := Form.Bind(req, &obj); err != nil {
                t.Fatal(err)
            }
            if len(obj.Tags) != 2 || obj.Count != 3 {
                t.Fatalf("unexpected %+v", obj)
            }
        }

        func TestJSONBindingRequired(t *testing.T) {
            req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"count": 1}`))
            var obj sample
            if err := JSON.Bind(req, &obj); err == nil {
                t.Fatal("expected required-field error")
            }
        }
    ''')
    return files


# ---------------------------------------------------------------------------
# Repository 2: acme/pyquery-tools (Python) - SQL building and parsing helpers
# ---------------------------------------------------------------------------


def pyquery_tools_files() -> dict[str, str]:
    files: dict[str, str] = {}
    files["README.md"] = src(r'''
        # pyquery-tools

        Small, dependency-free helpers for building and inspecting SQL from Python.

        * `QueryBuilder` - a fluent SELECT builder (`select("id").from_("users").where(...)`)
        * `escaping` - identifier quoting and literal escaping per dialect
        * `parser` - a tokenizer and a tiny recursive-descent parser for SELECT
        * `pagination` - keyset ("cursor") pagination helpers
        * `pyq` - a command line formatter: `pyq format query.sql --dialect postgres`

        ```python
        from pyquery_tools import QueryBuilder, col

        sql, params = (
            QueryBuilder("postgres")
            .select("id", "name")
            .from_("users")
            .where(col("age") >= 18)
            .order_by("name")
            .limit(10)
            .build()
        )
        ```

        Text helpers normalise Unicode, so a naïve café search matches "naive cafe".
    ''')
    files["CHANGELOG.md"] = src(r'''
        # Changelog

        ## 0.4.0
        - `pyq format` learned `--indent`.
        - Keyset pagination: `paginate()` returns a `CursorPage` with an opaque cursor.

        ## 0.3.0
        - PostgreSQL dialect: `RETURNING`, `$1` placeholders.
        - `toSql()` kept as an alias of `build()` for the 0.2 API.

        ## 0.2.0
        - First public release.
    ''')
    files["pyproject.toml"] = src(r'''
        [project]
        name = "pyquery-tools"
        version = "0.4.0"
        description = "Helpers for building and inspecting SQL"
        requires-python = ">=3.9"

        [project.scripts]
        pyq = "pyquery_tools.cli:main"

        [tool.pytest.ini_options]
        testpaths = ["tests"]
    ''')
    files["docs/usage.md"] = src(r'''
        # Usage

        ## Building queries

        `QueryBuilder(dialect)` collects clauses and renders them with `build()`, which
        returns `(sql, params)`. Values are never interpolated: every literal becomes a
        placeholder in the dialect's style (`?` for SQLite, `$1` for PostgreSQL).

        ## Escaping

        `quote_identifier("order")` returns `"order"` for both dialects. `escape_like`
        escapes `%` and `_` with a backslash so user input can be used in LIKE.

        ## Pagination

        `paginate(builder, key="id", after=cursor, size=50)` adds a keyset predicate
        and returns a `CursorPage(items, next_cursor)`. Cursors are URL-safe base64 of
        a small JSON document; treat them as opaque.
    ''')
    files["src/pyquery_tools/__init__.py"] = src(r'''
        """Helpers for building and inspecting SQL."""

        from .builder import QueryBuilder
        from .errors import ParseError, QueryError
        from .expressions import and_, col, or_

        __all__ = ["QueryBuilder", "ParseError", "QueryError", "and_", "col", "or_"]
        __version__ = "0.4.0"
    ''')
    files["src/pyquery_tools/errors.py"] = src(r'''
        class QueryError(Exception):
            """Raised when a query cannot be built."""


        class ParseError(QueryError):
            """Raised by the tokenizer and the parser; carries a 1-based position."""

            def __init__(self, message, line=1, column=1):
                super().__init__(f"{message} at line {line}, column {column}")
                self.line = line
                self.column = column
    ''')
    files["src/pyquery_tools/expressions.py"] = src(r'''
        """Expression objects used in WHERE clauses."""


        class Expression:
            def __and__(self, other):
                return BinaryOp("AND", self, other)

            def __or__(self, other):
                return BinaryOp("OR", self, other)

            def render(self, dialect, params):
                raise NotImplementedError


        class Column(Expression):
            def __init__(self, name):
                self.name = name

            def _compare(self, op, value):
                return BinaryOp(op, self, value if isinstance(value, Expression) else Literal(value))

            def __eq__(self, value):
                return self._compare("=", value)

            def __ne__(self, value):
                return self._compare("<>", value)

            def __lt__(self, value):
                return self._compare("<", value)

            def __ge__(self, value):
                return self._compare(">=", value)

            def __gt__(self, value):
                return self._compare(">", value)

            def like(self, pattern):
                return self._compare("LIKE", pattern)

            def is_null(self):
                return RawSql(f"{self.name} IS NULL")

            def render(self, dialect, params):
                return dialect.quote_identifier(self.name)

            def __repr__(self):
                return f"col({self.name!r})"


        class Literal(Expression):
            def __init__(self, value):
                self.value = value

            def render(self, dialect, params):
                params.append(self.value)
                return dialect.placeholder(len(params))


        class RawSql(Expression):
            def __init__(self, sql):
                self.sql = sql

            def render(self, dialect, params):
                return self.sql


        class BinaryOp(Expression):
            def __init__(self, op, left, right):
                self.op = op
                self.left = left
                self.right = right

            def render(self, dialect, params):
                left = self.left.render(dialect, params)
                right = self.right.render(dialect, params)
                if self.op in ("AND", "OR"):
                    return f"({left} {self.op} {right})"
                return f"{left} {self.op} {right}"


        def col(name):
            return Column(name)


        def and_(*parts):
            result = parts[0]
            for part in parts[1:]:
                result = BinaryOp("AND", result, part)
            return result


        def or_(*parts):
            result = parts[0]
            for part in parts[1:]:
                result = BinaryOp("OR", result, part)
            return result
    ''')
    files["src/pyquery_tools/builder.py"] = src(r'''
        """A fluent SELECT builder."""

        from .dialects import get_dialect
        from .errors import QueryError
        from .expressions import Expression


        class QueryBuilder:
            """Collects the clauses of a SELECT statement.

            Every method returns ``self`` so calls can be chained; ``build()``
            renders the statement for the configured dialect.
            """

            def __init__(self, dialect="sqlite"):
                self.dialect = get_dialect(dialect)
                self._columns = []
                self._table = None
                self._joins = []
                self._where = []
                self._order = []
                self._limit = None
                self._offset = None

            def select(self, *columns):
                self._columns.extend(columns)
                return self

            def from_(self, table):
                self._table = table
                return self

            def join(self, table, on, kind="INNER"):
                self._joins.append((kind, table, on))
                return self

            def where(self, expression):
                if not isinstance(expression, Expression):
                    raise QueryError(f"where() expects an expression, got {type(expression).__name__}")
                self._where.append(expression)
                return self

            def order_by(self, *columns):
                for column in columns:
                    descending = column.startswith("-")
                    self._order.append((column.lstrip("-"), descending))
                return self

            def limit(self, count):
                if count < 0:
                    raise QueryError("limit must not be negative")
                self._limit = count
                return self

            def offset(self, count):
                self._offset = count
                return self

            def _render_columns(self):
                if not self._columns:
                    return "*"
                return ", ".join(self.dialect.quote_identifier(c) for c in self._columns)

            def _render_order(self):
                parts = []
                for column, descending in self._order:
                    quoted = self.dialect.quote_identifier(column)
                    parts.append(f"{quoted} DESC" if descending else quoted)
                return ", ".join(parts)

            def build(self):
                if self._table is None:
                    raise QueryError("from_() was never called")
                params = []
                sql = f"SELECT {self._render_columns()} FROM {self.dialect.quote_identifier(self._table)}"
                for kind, table, on in self._joins:
                    sql += f" {kind} JOIN {self.dialect.quote_identifier(table)} ON {on.render(self.dialect, params)}"
                if self._where:
                    rendered = [expression.render(self.dialect, params) for expression in self._where]
                    sql += " WHERE " + " AND ".join(rendered)
                if self._order:
                    sql += " ORDER BY " + self._render_order()
                if self._limit is not None or self._offset is not None:
                    sql += " " + self.dialect.limitClause(self._limit, self._offset)
                return sql, params

            def toSql(self):
                """Deprecated 0.2 spelling of :meth:`build`; returns only the SQL text."""
                sql, _params = self.build()
                return sql

            def clone(self):
                other = QueryBuilder.__new__(QueryBuilder)
                other.__dict__.update({key: list(value) if isinstance(value, list) else value for key, value in self.__dict__.items()})
                return other
    ''')
    files["src/pyquery_tools/escaping.py"] = src(r'''
        """Quoting and escaping helpers shared by the dialects."""

        from .errors import QueryError

        LIKE_SPECIALS = ("%", "_")


        def quote_identifier(name, quote_char='"'):
            """Quote an identifier, doubling embedded quote characters."""
            if not name:
                raise QueryError("empty identifier")
            if "." in name:
                return ".".join(quote_identifier(part, quote_char) for part in name.split("."))
            return quote_char + name.replace(quote_char, quote_char * 2) + quote_char


        def escape_literal(value):
            """Render a Python value as an SQL literal (used only by the formatter)."""
            if value is None:
                return "NULL"
            if isinstance(value, bool):
                return "TRUE" if value else "FALSE"
            if isinstance(value, (int, float)):
                return repr(value)
            return "'" + str(value).replace("'", "''") + "'"


        def escape_like(pattern, escape_char="\\"):
            """Escape LIKE wildcards so user input matches literally."""
            escaped = pattern.replace(escape_char, escape_char * 2)
            for special in LIKE_SPECIALS:
                escaped = escaped.replace(special, escape_char + special)
            return escaped


        def escapeLikePattern(pattern):
            """camelCase alias kept for callers of the 0.2 API."""
            return escape_like(pattern)
    ''')
    files["src/pyquery_tools/dialects/__init__.py"] = src(r'''
        from .base import Dialect
        from .postgres import PostgresDialect
        from .sqlite import SqliteDialect

        _DIALECTS = {
            "sqlite": SqliteDialect,
            "postgres": PostgresDialect,
            "postgresql": PostgresDialect,
        }


        def get_dialect(name):
            if isinstance(name, Dialect):
                return name
            try:
                return _DIALECTS[name.lower()]()
            except KeyError:
                raise ValueError(f"unknown dialect {name!r}; expected one of {sorted(_DIALECTS)}") from None
    ''')
    files["src/pyquery_tools/dialects/base.py"] = src(r'''
        from ..escaping import quote_identifier


        class Dialect:
            """Rendering rules that differ between database engines."""

            name = "base"
            quote_char = '"'
            supports_returning = False

            def quote_identifier(self, name):
                if name == "*":
                    return name
                return quote_identifier(name, self.quote_char)

            def placeholder(self, index):
                """Return the placeholder for the index-th (1-based) parameter."""
                raise NotImplementedError

            def limitClause(self, limit, offset):
                parts = []
                if limit is not None:
                    parts.append(f"LIMIT {int(limit)}")
                if offset:
                    parts.append(f"OFFSET {int(offset)}")
                return " ".join(parts)
    ''')
    files["src/pyquery_tools/dialects/sqlite.py"] = src(r'''
        from .base import Dialect


        class SqliteDialect(Dialect):
            name = "sqlite"

            def placeholder(self, index):
                return "?"

            def limitClause(self, limit, offset):
                # SQLite needs a LIMIT whenever OFFSET is used.
                if limit is None and offset:
                    limit = -1
                return super().limitClause(limit, offset)
    ''')
    files["src/pyquery_tools/dialects/postgres.py"] = src(r'''
        from .base import Dialect


        class PostgresDialect(Dialect):
            name = "postgres"
            supports_returning = True

            def placeholder(self, index):
                return f"${index}"

            def returning(self, *columns):
                return "RETURNING " + ", ".join(self.quote_identifier(c) for c in columns)
    ''')
    files["src/pyquery_tools/parser/__init__.py"] = src(r'''
        from .parse import parse_select
        from .tokenizer import Token, TokenKind, tokenize

        __all__ = ["Token", "TokenKind", "parse_select", "tokenize"]
    ''')
    files["src/pyquery_tools/parser/tokenizer.py"] = src(r'''
        """Split SQL text into tokens.

        The tokenizer understands identifiers, quoted identifiers, numbers,
        single-quoted strings (with '' escapes), -- and /* */ comments, and
        punctuation. Positions are tracked so errors can point at the input.
        """

        import enum
        from dataclasses import dataclass

        from ..errors import ParseError

        KEYWORDS = frozenset(
            "SELECT FROM WHERE AND OR NOT ORDER BY ASC DESC LIMIT OFFSET JOIN INNER LEFT ON AS IS NULL LIKE IN".split()
        )
        PUNCTUATION = set("(),.;*=<>+-/")


        class TokenKind(enum.Enum):
            KEYWORD = "keyword"
            IDENT = "ident"
            NUMBER = "number"
            STRING = "string"
            PUNCT = "punct"
            PARAM = "param"
            EOF = "eof"


        @dataclass(frozen=True)
        class Token:
            kind: TokenKind
            value: str
            line: int
            column: int


        class _Scanner:
            def __init__(self, text):
                self.text = text
                self.pos = 0
                self.line = 1
                self.column = 1

            def peek(self, offset=0):
                index = self.pos + offset
                return self.text[index] if index < len(self.text) else ""

            def advance(self, count=1):
                for _ in range(count):
                    if self.peek() == "\n":
                        self.line += 1
                        self.column = 1
                    else:
                        self.column += 1
                    self.pos += 1

            def error(self, message):
                return ParseError(message, self.line, self.column)


        def _read_string(scanner):
            start_line, start_column = scanner.line, scanner.column
            scanner.advance()
            chars = []
            while True:
                ch = scanner.peek()
                if ch == "":
                    raise ParseError("unterminated string literal", start_line, start_column)
                if ch == "'":
                    if scanner.peek(1) == "'":
                        chars.append("'")
                        scanner.advance(2)
                        continue
                    scanner.advance()
                    return "".join(chars)
                chars.append(ch)
                scanner.advance()


        def _skip_comment(scanner):
            if scanner.peek() == "-" and scanner.peek(1) == "-":
                while scanner.peek() not in ("", "\n"):
                    scanner.advance()
                return True
            if scanner.peek() == "/" and scanner.peek(1) == "*":
                scanner.advance(2)
                while not (scanner.peek() == "*" and scanner.peek(1) == "/"):
                    if scanner.peek() == "":
                        raise scanner.error("unterminated block comment")
                    scanner.advance()
                scanner.advance(2)
                return True
            return False


        def tokenize(text):
            """Return the list of tokens of ``text``, ending with an EOF token."""
            scanner = _Scanner(text)
            tokens = []
            while scanner.peek():
                ch = scanner.peek()
                if ch.isspace():
                    scanner.advance()
                    continue
                if _skip_comment(scanner):
                    continue
                line, column = scanner.line, scanner.column
                if ch == "'":
                    tokens.append(Token(TokenKind.STRING, _read_string(scanner), line, column))
                elif ch == '"':
                    scanner.advance()
                    start = scanner.pos
                    while scanner.peek() not in ('"', ""):
                        scanner.advance()
                    tokens.append(Token(TokenKind.IDENT, text[start:scanner.pos], line, column))
                    scanner.advance()
                elif ch.isdigit():
                    start = scanner.pos
                    while scanner.peek().isdigit() or scanner.peek() == ".":
                        scanner.advance()
                    tokens.append(Token(TokenKind.NUMBER, text[start:scanner.pos], line, column))
                elif ch == "$" or ch == "?":
                    start = scanner.pos
                    scanner.advance()
                    while scanner.peek().isdigit():
                        scanner.advance()
                    tokens.append(Token(TokenKind.PARAM, text[start:scanner.pos], line, column))
                elif ch.isalpha() or ch == "_":
                    start = scanner.pos
                    while scanner.peek().isalnum() or scanner.peek() == "_":
                        scanner.advance()
                    word = text[start:scanner.pos]
                    kind = TokenKind.KEYWORD if word.upper() in KEYWORDS else TokenKind.IDENT
                    tokens.append(Token(kind, word.upper() if kind is TokenKind.KEYWORD else word, line, column))
                elif ch in PUNCTUATION:
                    scanner.advance()
                    tokens.append(Token(TokenKind.PUNCT, ch, line, column))
                else:
                    raise scanner.error(f"unexpected character {ch!r}")
            tokens.append(Token(TokenKind.EOF, "", scanner.line, scanner.column))
            return tokens
    ''')
    files["src/pyquery_tools/parser/ast_nodes.py"] = src(r'''
        from dataclasses import dataclass, field


        @dataclass
        class ColumnRef:
            name: str
            alias: str = ""


        @dataclass
        class OrderItem:
            column: str
            descending: bool = False


        @dataclass
        class SelectStmt:
            columns: list = field(default_factory=list)
            table: str = ""
            where: str = ""
            order_by: list = field(default_factory=list)
            limit: int = None
    ''')
    files["src/pyquery_tools/parser/parse.py"] = src(r'''
        """A tiny recursive-descent parser for single-table SELECT statements."""

        from ..errors import ParseError
        from .ast_nodes import ColumnRef, OrderItem, SelectStmt
        from .tokenizer import TokenKind, tokenize


        class Parser:
            def __init__(self, text):
                self.tokens = tokenize(text)
                self.index = 0

            @property
            def current(self):
                return self.tokens[self.index]

            def accept(self, kind, value=None):
                token = self.current
                if token.kind is kind and (value is None or token.value == value):
                    self.index += 1
                    return token
                return None

            def expect(self, kind, value=None):
                token = self.accept(kind, value)
                if token is None:
                    found = self.current
                    raise ParseError(f"expected {value or kind.value}, found {found.value or 'end of input'!r}", found.line, found.column)
                return token

            def parse_columns(self):
                columns = []
                while True:
                    if self.accept(TokenKind.PUNCT, "*"):
                        columns.append(ColumnRef("*"))
                    else:
                        name = self.expect(TokenKind.IDENT).value
                        alias = self.expect(TokenKind.IDENT).value if self.accept(TokenKind.KEYWORD, "AS") else ""
                        columns.append(ColumnRef(name, alias))
                    if not self.accept(TokenKind.PUNCT, ","):
                        return columns

            def parse_where(self):
                parts = []
                while self.current.kind is not TokenKind.EOF and not (
                    self.current.kind is TokenKind.KEYWORD and self.current.value in ("ORDER", "LIMIT")
                ):
                    parts.append(self.current.value)
                    self.index += 1
                return " ".join(parts)

            def parse_order(self):
                items = []
                while True:
                    name = self.expect(TokenKind.IDENT).value
                    descending = bool(self.accept(TokenKind.KEYWORD, "DESC"))
                    self.accept(TokenKind.KEYWORD, "ASC")
                    items.append(OrderItem(name, descending))
                    if not self.accept(TokenKind.PUNCT, ","):
                        return items


        def parse_select(text):
            parser = Parser(text)
            parser.expect(TokenKind.KEYWORD, "SELECT")
            stmt = SelectStmt(columns=parser.parse_columns())
            parser.expect(TokenKind.KEYWORD, "FROM")
            stmt.table = parser.expect(TokenKind.IDENT).value
            if parser.accept(TokenKind.KEYWORD, "WHERE"):
                stmt.where = parser.parse_where()
            if parser.accept(TokenKind.KEYWORD, "ORDER"):
                parser.expect(TokenKind.KEYWORD, "BY")
                stmt.order_by = parser.parse_order()
            if parser.accept(TokenKind.KEYWORD, "LIMIT"):
                stmt.limit = int(parser.expect(TokenKind.NUMBER).value)
            parser.accept(TokenKind.PUNCT, ";")
            parser.expect(TokenKind.EOF)
            return stmt
    ''')
    files["src/pyquery_tools/pagination.py"] = src(r'''
        """Keyset ("cursor") pagination."""

        import base64
        import json
        from dataclasses import dataclass

        from .expressions import col


        @dataclass
        class CursorPage:
            items: list
            next_cursor: str = None


        def encode_cursor(position):
            raw = json.dumps({"after": position}, separators=(",", ":")).encode("utf-8")
            return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


        def decode_cursor(cursor):
            padded = cursor + "=" * (-len(cursor) % 4)
            document = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
            return document["after"]


        def paginate(builder, key="id", after=None, size=50):
            """Restrict ``builder`` to one page after the ``after`` cursor."""
            page = builder.clone()
            if after is not None:
                page.where(col(key) > decode_cursor(after))
            return page.order_by(key).limit(size + 1)


        def make_page(rows, key="id", size=50):
            """Cut the size+1 rows fetched by paginate() into a CursorPage."""
            has_more = len(rows) > size
            items = rows[:size]
            next_cursor = encode_cursor(items[-1][key]) if has_more and items else None
            return CursorPage(items, next_cursor)
    ''')
    files["src/pyquery_tools/text_utils.py"] = src(r'''
        """Text helpers used by the formatter and the search helpers."""

        import re
        import unicodedata

        _WHITESPACE = re.compile(r"\s+")
        _NON_SLUG = re.compile(r"[^a-z0-9]+")


        def normalize_whitespace(text):
            return _WHITESPACE.sub(" ", text).strip()


        def fold_accents(text):
            """Turn "naïve café" into "naive cafe"."""
            decomposed = unicodedata.normalize("NFKD", text)
            return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


        def slugify(text):
            return _NON_SLUG.sub("-", fold_accents(text).lower()).strip("-")


        def strip_sql_comments(sql):
            without_block = re.sub(r"/\*.*?\*/", " ", sql, flags=re.S)
            return re.sub(r"--[^\n]*", " ", without_block)
    ''')
    files["src/pyquery_tools/cli.py"] = src(r'''
        """The ``pyq`` command line tool."""

        import argparse
        import sys

        from .errors import ParseError
        from .parser import parse_select
        from .text_utils import normalize_whitespace, strip_sql_comments


        def format_statement(sql, indent=2):
            stmt = parse_select(strip_sql_comments(sql))
            pad = " " * indent
            lines = ["SELECT"]
            lines.append(",\n".join(pad + (c.name + (f" AS {c.alias}" if c.alias else "")) for c in stmt.columns))
            lines.append(f"FROM {stmt.table}")
            if stmt.where:
                lines.append(f"WHERE {normalize_whitespace(stmt.where)}")
            if stmt.order_by:
                lines.append("ORDER BY " + ", ".join(o.column + (" DESC" if o.descending else "") for o in stmt.order_by))
            if stmt.limit is not None:
                lines.append(f"LIMIT {stmt.limit}")
            return "\n".join(lines)


        def build_parser():
            parser = argparse.ArgumentParser(prog="pyq")
            sub = parser.add_subparsers(dest="command", required=True)
            fmt = sub.add_parser("format", help="pretty-print a SELECT statement")
            fmt.add_argument("file", nargs="?", help="SQL file (default: stdin)")
            fmt.add_argument("--indent", type=int, default=2)
            return parser


        def main(argv=None):
            args = build_parser().parse_args(argv)
            text = open(args.file, encoding="utf-8").read() if args.file else sys.stdin.read()
            try:
                print(format_statement(text, indent=args.indent))
            except ParseError as exc:
                print(f"pyq: {exc}", file=sys.stderr)
                return 2
            return 0


        if __name__ == "__main__":
            sys.exit(main())
    ''')
    files["tests/conftest.py"] = src(r'''
        import pytest

        from pyquery_tools import QueryBuilder


        @pytest.fixture(params=["sqlite", "postgres"])
        def builder(request):
            return QueryBuilder(request.param)
    ''')
    files["tests/test_builder.py"] = src(r'''
        import pytest

        from pyquery_tools import QueryBuilder, QueryError, col


        def test_select_star():
            sql, params = QueryBuilder().from_("users").build()
            assert sql == 'SELECT * FROM "users"'
            assert params == []


        def test_where_uses_placeholders():
            sql, params = QueryBuilder("postgres").from_("users").where(col("age") >= 18).build()
            assert sql == 'SELECT * FROM "users" WHERE "age" >= $1'
            assert params == [18]


        def test_order_by_multiple_columns():
            sql, _ = QueryBuilder().from_("t").order_by("a", "-b").build()
            assert sql == 'SELECT * FROM "t" ORDER BY "a", "b" DESC'


        def test_negative_limit_rejected():
            with pytest.raises(QueryError):
                QueryBuilder().from_("t").limit(-1)


        def test_to_sql_alias(builder):
            assert builder.from_("t").toSql().startswith("SELECT *")
    ''')
    files["tests/test_escaping.py"] = src(r'''
        from pyquery_tools.escaping import escape_like, escape_literal, escapeLikePattern, quote_identifier


        def test_quote_identifier_doubles_quotes():
            assert quote_identifier('we"ird') == '"we""ird"'


        def test_quote_dotted_identifier():
            assert quote_identifier("public.users") == '"public"."users"'


        def test_escape_literal():
            assert escape_literal("O'Brien") == "'O''Brien'"
            assert escape_literal(None) == "NULL"


        def test_escape_like_wildcards():
            assert escape_like("100%_done") == "100\\%\\_done"


        def test_escape_like_backslash_first():
            assert escape_like("C:\\temp") == "C:\\\\temp"
            assert escapeLikePattern("a_b") == "a\\_b"
    ''')
    files["tests/test_tokenizer.py"] = src(r'''
        import pytest

        from pyquery_tools import ParseError
        from pyquery_tools.parser import TokenKind, tokenize


        def kinds(sql):
            return [token.kind for token in tokenize(sql)]


        def test_keywords_are_upper_cased():
            tokens = tokenize("select id from users")
            assert [t.value for t in tokens[:-1]] == ["SELECT", "id", "FROM", "users"]


        def test_string_with_escaped_quote():
            tokens = tokenize("SELECT 'it''s'")
            assert tokens[1].kind is TokenKind.STRING
            assert tokens[1].value == "it's"


        def test_unterminated_string_reports_position():
            with pytest.raises(ParseError) as info:
                tokenize("SELECT 'oops")
            assert (info.value.line, info.value.column) == (1, 8)


        def test_comments_are_skipped():
            assert kinds("SELECT 1 -- trailing\n/* block */") == [TokenKind.KEYWORD, TokenKind.NUMBER, TokenKind.EOF]


        def test_positional_parameters():
            tokens = tokenize("WHERE id = $12")
            assert tokens[-2].kind is TokenKind.PARAM and tokens[-2].value == "$12"
    ''')
    files["tests/test_pagination.py"] = src(r'''
        from pyquery_tools import QueryBuilder
        from pyquery_tools.pagination import decode_cursor, encode_cursor, make_page, paginate


        def test_cursor_roundtrip():
            assert decode_cursor(encode_cursor(1234)) == 1234


        def test_cursor_roundtrip_non_ascii():
            assert decode_cursor(encode_cursor("café")) == "café"


        def test_paginate_adds_keyset_predicate():
            cursor = encode_cursor(10)
            sql, params = paginate(QueryBuilder().from_("events"), after=cursor, size=20).build()
            assert sql == 'SELECT * FROM "events" WHERE "id" > ? ORDER BY "id" LIMIT 21'
            assert params == [10]


        def test_make_page_sets_next_cursor():
            rows = [{"id": i} for i in range(4)]
            page = make_page(rows, size=3)
            assert [r["id"] for r in page.items] == [0, 1, 2]
            assert decode_cursor(page.next_cursor) == 2
    ''')
    files["tests/test_dialects.py"] = src(r'''
        import pytest

        from pyquery_tools.dialects import get_dialect


        def test_postgres_placeholders():
            assert get_dialect("postgres").placeholder(3) == "$3"


        def test_sqlite_offset_without_limit():
            assert get_dialect("sqlite").limitClause(None, 5) == "LIMIT -1 OFFSET 5"


        def test_unknown_dialect():
            with pytest.raises(ValueError):
                get_dialect("oracle")
    ''')
    files["tests/test_cli.py"] = src(r'''
        from pyquery_tools.cli import format_statement, main


        def test_format_statement():
            out = format_statement("select a, b as bee from t where x = 1 order by a desc limit 3")
            assert out.splitlines() == ["SELECT", "  a,", "  b AS bee", "FROM t", "WHERE x = 1", "ORDER BY a DESC", "LIMIT 3"]


        def test_main_reports_parse_errors(tmp_path, capsys):
            sql = tmp_path / "bad.sql"
            sql.write_text("SELECT 'unterminated", encoding="utf-8")
            assert main(["format", str(sql)]) == 2
            assert "unterminated string literal" in capsys.readouterr().err
    ''')
    return files


# ---------------------------------------------------------------------------
# Repository 3: nimbus/rusty-cache (Rust, with TypeScript bindings)
# ---------------------------------------------------------------------------


def rusty_cache_files() -> dict[str, str]:
    files: dict[str, str] = {}
    files["README.md"] = src(r'''
        # rusty-cache

        In-process caches for Rust services: an O(1) LRU, a TTL cache driven by an
        injectable clock, and a sharded wrapper for concurrent use. A TypeScript client
        for the `cachectl` HTTP sidecar lives in `bindings/ts`.

        ```rust
        use rusty_cache::{CacheBuilder, LruCache};

        let mut cache: LruCache<String, u64> = CacheBuilder::new().capacity(1024).build_lru();
        cache.put("answer".into(), 42);
        assert_eq!(cache.get(&"answer".into()), Some(&42));
        ```

        Eviction policies (`LRU`, `LFU`, `FIFO`) implement `EvictionPolicy`; statistics
        (hits, misses, evictions) are collected by `CacheStats`.

        Configuration can come from the environment: `RUSTY_CACHE_CAPACITY`,
        `RUSTY_CACHE_TTL_SECS` and `RUSTY_CACHE_SHARDS`.
    ''')
    files["Cargo.toml"] = src(r'''
        [package]
        name = "rusty-cache"
        version = "0.3.1"
        edition = "2021"
        license = "MIT"
        description = "LRU, LFU and TTL caches with a sharded wrapper"

        [dependencies]

        [dev-dependencies]

        [[bin]]
        name = "cachectl"
        path = "src/bin/cachectl.rs"

        [[bench]]
        name = "get_set"
        harness = false
    ''')
    files["src/lib.rs"] = src(r'''
        //! In-process caches: LRU, TTL and a sharded wrapper.

        pub mod clock;
        pub mod config;
        pub mod error;
        pub mod eviction;
        pub mod lru;
        pub mod shard;
        pub mod stats;
        pub mod ttl;

        pub use config::{CacheBuilder, CacheConfig};
        pub use error::CacheError;
        pub use lru::LruCache;
        pub use shard::ShardedCache;
        pub use stats::CacheStats;
        pub use ttl::TtlCache;

        /// Common operations of every cache in this crate.
        pub trait Cache<K, V> {
            fn get(&mut self, key: &K) -> Option<&V>;
            fn put(&mut self, key: K, value: V) -> Option<V>;
            fn remove(&mut self, key: &K) -> Option<V>;
            fn len(&self) -> usize;
            fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }
    ''')
    files["src/error.rs"] = src(r'''
        use std::fmt;

        /// Errors returned by fallible cache operations.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum CacheError {
            /// A configuration value was out of range.
            InvalidConfig(String),
            /// The environment variable could not be parsed.
            BadEnv { name: &'static str, value: String },
        }

        impl fmt::Display for CacheError {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    CacheError::InvalidConfig(msg) => write!(f, "invalid cache config: {msg}"),
                    CacheError::BadEnv { name, value } => write!(f, "cannot parse {name}={value:?}"),
                }
            }
        }

        impl std::error::Error for CacheError {}
    ''')
    files["src/config.rs"] = src(r'''
        use std::env;
        use std::time::Duration;

        use crate::error::CacheError;
        use crate::lru::LruCache;
        use crate::ttl::TtlCache;

        /// Settings shared by all cache constructors.
        #[derive(Debug, Clone)]
        pub struct CacheConfig {
            pub capacity: usize,
            pub default_ttl: Option<Duration>,
            pub shards: usize,
        }

        impl Default for CacheConfig {
            fn default() -> Self {
                CacheConfig { capacity: 1024, default_ttl: None, shards: 16 }
            }
        }

        impl CacheConfig {
            /// Read RUSTY_CACHE_CAPACITY, RUSTY_CACHE_TTL_SECS and RUSTY_CACHE_SHARDS.
            pub fn from_env() -> Result<Self, CacheError> {
                let mut config = CacheConfig::default();
                if let Ok(value) = env::var("RUSTY_CACHE_CAPACITY") {
                    config.capacity = value.parse().map_err(|_| CacheError::BadEnv { name: "RUSTY_CACHE_CAPACITY", value })?;
                }
                if let Ok(value) = env::var("RUSTY_CACHE_TTL_SECS") {
                    let secs: u64 = value.parse().map_err(|_| CacheError::BadEnv { name: "RUSTY_CACHE_TTL_SECS", value })?;
                    config.default_ttl = Some(Duration::from_secs(secs));
                }
                if let Ok(value) = env::var("RUSTY_CACHE_SHARDS") {
                    config.shards = value.parse().map_err(|_| CacheError::BadEnv { name: "RUSTY_CACHE_SHARDS", value })?;
                }
                config.validate()?;
                Ok(config)
            }

            pub fn validate(&self) -> Result<(), CacheError> {
                if self.capacity == 0 {
                    return Err(CacheError::InvalidConfig("capacity must be at least 1".into()));
                }
                if !self.shards.is_power_of_two() {
                    return Err(CacheError::InvalidConfig(format!("shards must be a power of two, got {}", self.shards)));
                }
                Ok(())
            }
        }

        /// Fluent constructor for the cache types.
        #[derive(Debug, Default)]
        pub struct CacheBuilder {
            config: CacheConfig,
        }

        impl CacheBuilder {
            pub fn new() -> Self {
                CacheBuilder::default()
            }

            pub fn capacity(mut self, capacity: usize) -> Self {
                self.config.capacity = capacity;
                self
            }

            pub fn ttl(mut self, ttl: Duration) -> Self {
                self.config.default_ttl = Some(ttl);
                self
            }

            pub fn build_lru<K: std::hash::Hash + Eq + Clone, V>(self) -> LruCache<K, V> {
                LruCache::new(self.config.capacity)
            }

            pub fn build_ttl<K: std::hash::Hash + Eq + Clone, V>(self) -> TtlCache<K, V> {
                TtlCache::new(self.config.capacity, self.config.default_ttl.unwrap_or(Duration::from_secs(60)))
            }
        }
    ''')
    files["src/clock.rs"] = src(r'''
        use std::cell::Cell;
        use std::time::{Duration, SystemTime, UNIX_EPOCH};

        /// A source of "now" so TTL expiry can be tested without sleeping.
        pub trait Clock {
            /// Milliseconds since the Unix epoch.
            fn now_millis(&self) -> u64;
        }

        /// The wall clock.
        #[derive(Debug, Default, Clone, Copy)]
        pub struct SystemClock;

        impl Clock for SystemClock {
            fn now_millis(&self) -> u64 {
                SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64
            }
        }

        /// A manually advanced clock for tests.
        #[derive(Debug, Default)]
        pub struct MockClock {
            now: Cell<u64>,
        }

        impl MockClock {
            pub fn new(start_millis: u64) -> Self {
                MockClock { now: Cell::new(start_millis) }
            }

            pub fn advance(&self, by: Duration) {
                self.now.set(self.now.get() + by.as_millis() as u64);
            }

            pub fn rewind(&self, by: Duration) {
                self.now.set(self.now.get() - by.as_millis() as u64);
            }
        }

        impl Clock for MockClock {
            fn now_millis(&self) -> u64 {
                self.now.get()
            }
        }
    ''')
    files["src/lru.rs"] = src(r'''
        //! An O(1) least-recently-used cache backed by a slab and an intrusive list.

        use std::collections::HashMap;
        use std::hash::Hash;

        use crate::stats::CacheStats;
        use crate::Cache;

        const NIL: usize = usize::MAX;

        struct Entry<K, V> {
            key: K,
            value: V,
            prev: usize,
            next: usize,
        }

        /// A fixed-capacity cache that evicts the least recently used entry.
        pub struct LruCache<K, V> {
            map: HashMap<K, usize>,
            slab: Vec<Entry<K, V>>,
            free: Vec<usize>,
            head: usize,
            tail: usize,
            capacity: usize,
            stats: CacheStats,
        }

        impl<K: Hash + Eq + Clone, V> LruCache<K, V> {
            pub fn new(capacity: usize) -> Self {
                assert!(capacity > 0, "capacity must be at least 1");
                LruCache {
                    map: HashMap::with_capacity(capacity),
                    slab: Vec::with_capacity(capacity),
                    free: Vec::new(),
                    head: NIL,
                    tail: NIL,
                    capacity,
                    stats: CacheStats::default(),
                }
            }

            pub fn capacity(&self) -> usize {
                self.capacity
            }

            pub fn stats(&self) -> &CacheStats {
                &self.stats
            }

            fn detach(&mut self, index: usize) {
                let (prev, next) = (self.slab[index].prev, self.slab[index].next);
                if prev != NIL {
                    self.slab[prev].next = next;
                } else {
                    self.head = next;
                }
                if next != NIL {
                    self.slab[next].prev = prev;
                } else {
                    self.tail = prev;
                }
            }

            fn push_front(&mut self, index: usize) {
                self.slab[index].prev = NIL;
                self.slab[index].next = self.head;
                if self.head != NIL {
                    self.slab[self.head].prev = index;
                }
                self.head = index;
                if self.tail == NIL {
                    self.tail = index;
                }
            }

            fn evict_lru(&mut self) -> Option<V>
            where
                V: Default,
            {
                if self.tail == NIL {
                    return None;
                }
                let index = self.tail;
                self.detach(index);
                let key = self.slab[index].key.clone();
                self.map.remove(&key);
                self.free.push(index);
                self.stats.record_eviction();
                Some(std::mem::take(&mut self.slab[index].value))
            }

            /// Return the value for `key` without touching the recency order.
            pub fn peek(&self, key: &K) -> Option<&V> {
                self.map.get(key).map(|&index| &self.slab[index].value)
            }
        }

        impl<K: Hash + Eq + Clone, V: Default> Cache<K, V> for LruCache<K, V> {
            fn get(&mut self, key: &K) -> Option<&V> {
                match self.map.get(key).copied() {
                    Some(index) => {
                        self.stats.record_hit();
                        self.detach(index);
                        self.push_front(index);
                        Some(&self.slab[index].value)
                    }
                    None => {
                        self.stats.record_miss();
                        None
                    }
                }
            }

            fn put(&mut self, key: K, value: V) -> Option<V> {
                if let Some(&index) = self.map.get(&key) {
                    let old = std::mem::replace(&mut self.slab[index].value, value);
                    self.detach(index);
                    self.push_front(index);
                    return Some(old);
                }
                if self.map.len() >= self.capacity {
                    self.evict_lru();
                }
                let entry = Entry { key: key.clone(), value, prev: NIL, next: NIL };
                let index = match self.free.pop() {
                    Some(index) => {
                        self.slab[index] = entry;
                        index
                    }
                    None => {
                        self.slab.push(entry);
                        self.slab.len() - 1
                    }
                };
                self.map.insert(key, index);
                self.push_front(index);
                None
            }

            fn remove(&mut self, key: &K) -> Option<V> {
                let index = self.map.remove(key)?;
                self.detach(index);
                self.free.push(index);
                Some(std::mem::take(&mut self.slab[index].value))
            }

            fn len(&self) -> usize {
                self.map.len()
            }
        }
    ''')
    files["src/ttl.rs"] = src(r'''
        //! A cache whose entries expire after a time-to-live.

        use std::collections::HashMap;
        use std::hash::Hash;
        use std::time::Duration;

        use crate::clock::{Clock, SystemClock};
        use crate::stats::CacheStats;

        struct TtlEntry<V> {
            value: V,
            expire_at: u64,
        }

        /// Entries are visible until their deadline; expired entries are dropped lazily
        /// on access and eagerly by `purge_expired`.
        pub struct TtlCache<K, V, C: Clock = SystemClock> {
            entries: HashMap<K, TtlEntry<V>>,
            capacity: usize,
            default_ttl: Duration,
            clock: C,
            stats: CacheStats,
        }

        impl<K: Hash + Eq + Clone, V> TtlCache<K, V, SystemClock> {
            pub fn new(capacity: usize, default_ttl: Duration) -> Self {
                TtlCache::with_clock(capacity, default_ttl, SystemClock)
            }
        }

        impl<K: Hash + Eq + Clone, V, C: Clock> TtlCache<K, V, C> {
            pub fn with_clock(capacity: usize, default_ttl: Duration, clock: C) -> Self {
                TtlCache { entries: HashMap::new(), capacity, default_ttl, clock, stats: CacheStats::default() }
            }

            pub fn clock(&self) -> &C {
                &self.clock
            }

            fn is_expired(&self, entry: &TtlEntry<V>, now: u64) -> bool {
                now > entry.expire_at
            }

            pub fn insert_with_ttl(&mut self, key: K, value: V, ttl: Duration) {
                if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
                    self.purge_expired();
                    if self.entries.len() >= self.capacity {
                        if let Some(victim) = self.soonest_to_expire() {
                            self.entries.remove(&victim);
                            self.stats.record_eviction();
                        }
                    }
                }
                let expire_at = self.clock.now_millis() + ttl.as_millis() as u64;
                self.entries.insert(key, TtlEntry { value, expire_at });
            }

            pub fn insert(&mut self, key: K, value: V) {
                let ttl = self.default_ttl;
                self.insert_with_ttl(key, value, ttl);
            }

            pub fn get(&mut self, key: &K) -> Option<&V> {
                let now = self.clock.now_millis();
                let expired = match self.entries.get(key) {
                    Some(entry) => self.is_expired(entry, now),
                    None => {
                        self.stats.record_miss();
                        return None;
                    }
                };
                if expired {
                    self.entries.remove(key);
                    self.stats.record_miss();
                    return None;
                }
                self.stats.record_hit();
                self.entries.get(key).map(|entry| &entry.value)
            }

            /// Milliseconds left before `key` expires.
            pub fn remaining(&self, key: &K) -> Option<u64> {
                let now = self.clock.now_millis();
                self.entries.get(key).map(|entry| entry.expire_at - now)
            }

            fn soonest_to_expire(&self) -> Option<K> {
                self.entries.iter().min_by_key(|(_, entry)| entry.expire_at).map(|(key, _)| key.clone())
            }

            /// Drop every expired entry and return how many were removed.
            pub fn purge_expired(&mut self) -> usize {
                let now = self.clock.now_millis();
                let before = self.entries.len();
                self.entries.retain(|_, entry| now <= entry.expire_at);
                before - self.entries.len()
            }

            pub fn len(&self) -> usize {
                self.entries.len()
            }

            pub fn is_empty(&self) -> bool {
                self.entries.is_empty()
            }
        }
    ''')
    files["src/shard.rs"] = src(r'''
        //! A cache split into independently locked shards.

        use std::collections::hash_map::DefaultHasher;
        use std::hash::{Hash, Hasher};
        use std::sync::Mutex;

        use crate::lru::LruCache;
        use crate::stats::CacheStats;
        use crate::Cache;

        pub struct ShardedCache<K, V> {
            shards: Vec<Mutex<LruCache<K, V>>>,
            mask: u64,
        }

        impl<K: Hash + Eq + Clone, V: Clone + Default> ShardedCache<K, V> {
            /// `shards` must be a power of two; capacity is split evenly.
            pub fn new(capacity: usize, shards: usize) -> Self {
                assert!(shards.is_power_of_two(), "shards must be a power of two");
                let per_shard = (capacity / shards).max(1);
                let shards = (0..shards).map(|_| Mutex::new(LruCache::new(per_shard))).collect();
                ShardedCache { shards, mask: 0 }.with_mask()
            }

            fn with_mask(mut self) -> Self {
                self.mask = self.shards.len() as u64 - 1;
                self
            }

            pub fn shard_for(&self, key: &K) -> usize {
                let mut hasher = DefaultHasher::new();
                key.hash(&mut hasher);
                (hasher.finish() >> 7 & self.mask) as usize
            }

            pub fn get(&self, key: &K) -> Option<V> {
                let mut shard = self.shards[self.shard_for(key)].lock().unwrap();
                shard.get(key).cloned()
            }

            pub fn put(&self, key: K, value: V) -> Option<V> {
                let mut shard = self.shards[self.shard_for(&key)].lock().unwrap();
                shard.put(key, value)
            }

            pub fn shard_lens(&self) -> Vec<usize> {
                self.shards.iter().map(|shard| shard.lock().unwrap().len()).collect()
            }

            /// Merge the statistics of every shard.
            pub fn stats(&self) -> CacheStats {
                let mut total = CacheStats::default();
                for shard in &self.shards {
                    total.merge(shard.lock().unwrap().stats());
                }
                total
            }
        }
    ''')
    files["src/stats.rs"] = src(r'''
        /// Counters collected by every cache.
        #[derive(Debug, Default, Clone, PartialEq, Eq)]
        pub struct CacheStats {
            pub hits: u64,
            pub misses: u64,
            pub evictions: u64,
        }

        impl CacheStats {
            pub fn record_hit(&mut self) {
                self.hits += 1;
            }

            pub fn record_miss(&mut self) {
                self.misses += 1;
            }

            pub fn record_eviction(&mut self) {
                self.evictions += 1;
            }

            pub fn merge(&mut self, other: &CacheStats) {
                self.hits += other.hits;
                self.misses += other.misses;
                self.evictions += other.evictions;
            }

            /// Fraction of lookups that were hits; 0.0 before the first lookup.
            pub fn hit_ratio(&self) -> f64 {
                let lookups = self.hits + self.misses;
                if lookups == 0 {
                    return 0.0;
                }
                self.hits as f64 / lookups as f64
            }
        }
    ''')
    files["src/eviction/mod.rs"] = src(r'''
        //! Pluggable eviction policies.

        pub mod fifo;
        pub mod lfu;

        pub use fifo::FifoPolicy;
        pub use lfu::LfuPolicy;

        /// Decides which key leaves the cache when it is full.
        pub trait EvictionPolicy<K> {
            /// A key was read.
            fn on_access(&mut self, key: &K);
            /// A key was inserted.
            fn on_insert(&mut self, key: &K);
            /// A key was removed explicitly.
            fn on_remove(&mut self, key: &K);
            /// Choose the next victim, if any.
            fn victim(&mut self) -> Option<K>;
        }
    ''')
    files["src/eviction/lfu.rs"] = src(r'''
        use std::collections::{BTreeMap, HashMap, HashSet};
        use std::hash::Hash;

        use super::EvictionPolicy;

        /// Least-frequently-used: evicts the key with the lowest access count,
        /// breaking ties by insertion order.
        #[derive(Debug, Default)]
        pub struct LfuPolicy<K: Hash + Eq> {
            counts: HashMap<K, u64>,
            buckets: BTreeMap<u64, Vec<K>>,
        }

        impl<K: Hash + Eq + Clone> LfuPolicy<K> {
            pub fn new() -> Self {
                LfuPolicy { counts: HashMap::new(), buckets: BTreeMap::new() }
            }

            fn bump(&mut self, key: &K) {
                let count = self.counts.entry(key.clone()).or_insert(0);
                if let Some(bucket) = self.buckets.get_mut(count) {
                    bucket.retain(|k| k != key);
                }
                *count += 1;
                self.buckets.entry(*count).or_default().push(key.clone());
            }

            pub fn frequency(&self, key: &K) -> u64 {
                self.counts.get(key).copied().unwrap_or(0)
            }

            pub fn distinct_frequencies(&self) -> HashSet<u64> {
                self.counts.values().copied().collect()
            }
        }

        impl<K: Hash + Eq + Clone> EvictionPolicy<K> for LfuPolicy<K> {
            fn on_access(&mut self, key: &K) {
                self.bump(key);
            }

            fn on_insert(&mut self, key: &K) {
                self.bump(key);
            }

            fn on_remove(&mut self, key: &K) {
                if let Some(count) = self.counts.remove(key) {
                    if let Some(bucket) = self.buckets.get_mut(&count) {
                        bucket.retain(|k| k != key);
                    }
                }
            }

            fn victim(&mut self) -> Option<K> {
                let (&count, bucket) = self.buckets.iter_mut().find(|(_, bucket)| !bucket.is_empty())?;
                let key = bucket.remove(0);
                let _ = count;
                self.counts.remove(&key);
                Some(key)
            }
        }
    ''')
    files["src/eviction/fifo.rs"] = src(r'''
        use std::collections::VecDeque;

        use super::EvictionPolicy;

        /// First-in, first-out: accesses do not change the order.
        #[derive(Debug, Default)]
        pub struct FifoPolicy<K> {
            queue: VecDeque<K>,
        }

        impl<K: PartialEq + Clone> EvictionPolicy<K> for FifoPolicy<K> {
            fn on_access(&mut self, _key: &K) {}

            fn on_insert(&mut self, key: &K) {
                self.queue.push_back(key.clone());
            }

            fn on_remove(&mut self, key: &K) {
                self.queue.retain(|k| k != key);
            }

            fn victim(&mut self) -> Option<K> {
                self.queue.pop_front()
            }
        }
    ''')
    files["src/bin/cachectl.rs"] = src(r'''
        //! `cachectl`: inspect a running cache sidecar.
        //!
        //! Usage: cachectl stats [--per-shard] | cachectl get KEY | cachectl warm FILE

        use std::env;
        use std::process::ExitCode;

        use rusty_cache::{CacheConfig, ShardedCache};

        fn print_stats(cache: &ShardedCache<String, String>, per_shard: bool) {
            let stats = cache.stats();
            println!("hits={} misses={} evictions={} hit_ratio={:.3}", stats.hits, stats.misses, stats.evictions, stats.hit_ratio());
            if per_shard {
                for (index, len) in cache.shard_lens().iter().enumerate() {
                    println!("shard[{index}] entries={len}");
                }
            }
        }

        fn main() -> ExitCode {
            let config = match CacheConfig::from_env() {
                Ok(config) => config,
                Err(err) => {
                    eprintln!("cachectl: {err}");
                    return ExitCode::from(2);
                }
            };
            let cache: ShardedCache<String, String> = ShardedCache::new(config.capacity, config.shards);
            let args: Vec<String> = env::args().skip(1).collect();
            match args.first().map(String::as_str) {
                Some("stats") => print_stats(&cache, args.iter().any(|a| a == "--per-shard")),
                Some("get") => match args.get(1) {
                    Some(key) => println!("{:?}", cache.get(key)),
                    None => {
                        eprintln!("cachectl get: missing KEY");
                        return ExitCode::from(2);
                    }
                },
                _ => {
                    eprintln!("usage: cachectl stats [--per-shard] | get KEY");
                    return ExitCode::from(2);
                }
            }
            ExitCode::SUCCESS
        }
    ''')
    files["tests/lru_tests.rs"] = src(r'''
        use rusty_cache::{Cache, LruCache};

        #[test]
        fn evicts_least_recently_used() {
            let mut cache = LruCache::new(2);
            cache.put("a", 1);
            cache.put("b", 2);
            assert_eq!(cache.get(&"a"), Some(&1));
            cache.put("c", 3);
            assert_eq!(cache.peek(&"b"), None);
            assert_eq!(cache.stats().evictions, 1);
        }

        #[test]
        fn put_existing_key_returns_old_value() {
            let mut cache = LruCache::new(2);
            cache.put("a", 1);
            assert_eq!(cache.put("a", 10), Some(1));
            assert_eq!(cache.len(), 1);
        }

        #[test]
        fn removed_slots_are_reused() {
            let mut cache = LruCache::new(3);
            for i in 0..3 {
                cache.put(i, i);
            }
            cache.remove(&1);
            cache.put(9, 9);
            assert_eq!(cache.len(), 3);
            assert_eq!(cache.stats().evictions, 0);
        }
    ''')
    files["tests/ttl_tests.rs"] = src(r'''
        use std::time::Duration;

        use rusty_cache::clock::MockClock;
        use rusty_cache::TtlCache;

        fn cache() -> TtlCache<&'static str, u32, MockClock> {
            TtlCache::with_clock(8, Duration::from_secs(10), MockClock::new(1_000))
        }

        #[test]
        fn entry_visible_until_deadline() {
            let mut cache = cache();
            cache.insert("k", 1);
            cache.clock().advance(Duration::from_secs(10));
            assert_eq!(cache.get(&"k"), None, "an entry must expire at its deadline");
        }

        #[test]
        fn purge_removes_only_expired() {
            let mut cache = cache();
            cache.insert_with_ttl("short", 1, Duration::from_secs(1));
            cache.insert_with_ttl("long", 2, Duration::from_secs(60));
            cache.clock().advance(Duration::from_secs(5));
            assert_eq!(cache.purge_expired(), 1);
            assert_eq!(cache.len(), 1);
        }

        #[test]
        fn remaining_counts_down() {
            let mut cache = cache();
            cache.insert("k", 1);
            cache.clock().advance(Duration::from_secs(4));
            assert_eq!(cache.remaining(&"k"), Some(6_000));
        }
    ''')
    files["tests/shard_tests.rs"] = src(r'''
        use rusty_cache::ShardedCache;

        #[test]
        fn entries_spread_across_shards() {
            let cache: ShardedCache<String, String> = ShardedCache::new(1024, 4);
            for i in 0..100 {
                cache.put(format!("key-{i}"), i.to_string());
            }
            for (shard, len) in cache.shard_lens().iter().enumerate() {
                assert!(*len > 0, "shard {shard} is empty");
            }
        }

        #[test]
        fn stats_are_merged() {
            let cache: ShardedCache<u32, u32> = ShardedCache::new(64, 2);
            cache.put(1, 1);
            cache.get(&1);
            cache.get(&2);
            let stats = cache.stats();
            assert_eq!((stats.hits, stats.misses), (1, 1));
        }
    ''')
    files["tests/eviction_tests.rs"] = src(r'''
        use rusty_cache::eviction::{EvictionPolicy, FifoPolicy, LfuPolicy};

        #[test]
        fn lfu_evicts_coldest_key() {
            let mut policy = LfuPolicy::new();
            policy.on_insert(&"hot");
            policy.on_insert(&"cold");
            policy.on_access(&"hot");
            assert_eq!(policy.victim(), Some("cold"));
        }

        #[test]
        fn lfu_frequency_counts_accesses() {
            let mut policy = LfuPolicy::new();
            policy.on_insert(&1);
            policy.on_access(&1);
            policy.on_access(&1);
            assert_eq!(policy.frequency(&1), 3);
        }

        #[test]
        fn fifo_ignores_access() {
            let mut policy = FifoPolicy::default();
            policy.on_insert(&"a");
            policy.on_insert(&"b");
            policy.on_access(&"a");
            assert_eq!(policy.victim(), Some("a"));
        }
    ''')
    files["benches/get_set.rs"] = src(r'''
        use std::time::Instant;

        use rusty_cache::{Cache, LruCache};

        fn main() {
            let mut cache = LruCache::new(10_000);
            let start = Instant::now();
            for i in 0..1_000_000u64 {
                cache.put(i % 20_000, i);
                let _ = cache.get(&(i % 15_000));
            }
            let elapsed = start.elapsed();
            println!("1M put+get: {elapsed:?} ({:.1} ns/op)", elapsed.as_nanos() as f64 / 2e6);
            println!("hit ratio: {:.3}", cache.stats().hit_ratio());
        }
    ''')
    files["examples/warmup.rs"] = src(r'''
        //! Pre-fill a cache from a "key=value" file before serving traffic.

        use std::fs;

        use rusty_cache::{Cache, CacheBuilder, LruCache};

        fn main() -> std::io::Result<()> {
            let mut cache: LruCache<String, String> = CacheBuilder::new().capacity(4096).build_lru();
            let text = fs::read_to_string("warmup.txt")?;
            for line in text.lines().filter(|line| !line.trim().is_empty()) {
                if let Some((key, value)) = line.split_once('=') {
                    cache.put(key.trim().to_string(), value.trim().to_string());
                }
            }
            println!("warmed {} entries", cache.len());
            Ok(())
        }
    ''')
    files["bindings/ts/package.json"] = src(r'''
        {
          "name": "@nimbus/rusty-cache-client",
          "version": "0.3.1",
          "description": "TypeScript client for the cachectl HTTP sidecar",
          "main": "dist/index.js",
          "types": "dist/index.d.ts",
          "scripts": {
            "build": "tsc -p .",
            "test": "vitest run"
          },
          "devDependencies": {
            "typescript": "^5.4.0",
            "vitest": "^1.6.0"
          }
        }
    ''')
    files["bindings/ts/src/index.ts"] = src(r'''
        export { CacheClient, createClient } from "./client";
        export type { ClientOptions, CacheEntry } from "./client";
        export { withRetry } from "./retry";
        export type { RetryOptions } from "./retry";
    ''')
    files["bindings/ts/src/retry.ts"] = src(r'''
        export interface RetryOptions {
          attempts: number;
          baseDelayMs: number;
          maxDelayMs?: number;
          signal?: AbortSignal;
        }

        export const defaultRetryOptions: RetryOptions = { attempts: 3, baseDelayMs: 50, maxDelayMs: 1000 };

        const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

        export function backoffDelay(attempt: number, options: RetryOptions): number {
          const delay = options.baseDelayMs * 2 ** attempt;
          return Math.min(delay, options.maxDelayMs ?? Number.POSITIVE_INFINITY);
        }

        export async function withRetry<T>(operation: () => Promise<T>, options: RetryOptions = defaultRetryOptions): Promise<T> {
          let lastError: unknown;
          for (let attempt = 0; attempt < options.attempts; attempt++) {
            try {
              return await operation();
            } catch (error) {
              lastError = error;
              if (attempt + 1 < options.attempts) {
                await sleep(backoffDelay(attempt, options));
              }
            }
          }
          throw lastError;
        }
    ''')
    files["bindings/ts/src/client.ts"] = src(r'''
        import { RetryOptions, defaultRetryOptions, withRetry } from "./retry";

        export interface ClientOptions {
          baseUrl: string;
          timeoutMs?: number;
          retry?: RetryOptions;
        }

        export interface CacheEntry<T> {
          key: string;
          value: T;
          ttlSeconds?: number;
        }

        export class CacheClient {
          private readonly baseUrl: string;
          private readonly retry: RetryOptions;

          constructor(private readonly options: ClientOptions) {
            this.baseUrl = options.baseUrl.replace(/\/+$/, "");
            this.retry = options.retry ?? defaultRetryOptions;
          }

          private url(key: string): string {
            return `${this.baseUrl}/v1/keys/${encodeURIComponent(key)}`;
          }

          async getValue<T>(key: string): Promise<T | undefined> {
            const response = await withRetry(() => fetch(this.url(key)), this.retry);
            if (response.status === 404) {
              return undefined;
            }
            if (!response.ok) {
              throw new Error(`cache get failed: ${response.status}`);
            }
            const entry = (await response.json()) as CacheEntry<T>;
            return entry.value;
          }

          async setWithTtl<T>(key: string, value: T, ttlSeconds?: number): Promise<void> {
            const body: CacheEntry<T> = { key, value, ttlSeconds };
            const response = await withRetry(
              () => fetch(this.url(key), { method: "PUT", body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
              this.retry,
            );
            if (!response.ok) {
              throw new Error(`cache set failed: ${response.status}`);
            }
          }

          async getOrLoad<T>(key: string, loader: () => Promise<T>, ttlSeconds?: number): Promise<T> {
            const cached = await this.getValue<T>(key);
            if (cached !== undefined) {
              return cached;
            }
            let loaded: T;
            try {
              loaded = await loader();
            } catch (error) {
              console.warn(`cache miss for ${key}`);
              throw error;
            }
            await this.setWithTtl(key, loaded, ttlSeconds);
            return loaded;
          }
        }

        export function createClient(baseUrl: string, options: Partial<ClientOptions> = {}): CacheClient {
          return new CacheClient({ ...options, baseUrl });
        }
    ''')
    files["bindings/ts/test/client.test.ts"] = src(r'''
        import { describe, expect, it, vi } from "vitest";

        import { createClient } from "../src/client";
        import { backoffDelay, withRetry } from "../src/retry";

        describe("withRetry", () => {
          it("retries until the operation succeeds", async () => {
            const operation = vi.fn().mockRejectedValueOnce(new Error("boom")).mockResolvedValue("ok");
            await expect(withRetry(operation, { attempts: 3, baseDelayMs: 1 })).resolves.toBe("ok");
            expect(operation).toHaveBeenCalledTimes(2);
          });

          it("caps the backoff delay", () => {
            expect(backoffDelay(10, { attempts: 3, baseDelayMs: 50, maxDelayMs: 1000 })).toBe(1000);
          });
        });

        describe("CacheClient", () => {
          it("strips trailing slashes from the base url", async () => {
            const fetchMock = vi.fn().mockResolvedValue(new Response(null, { status: 404 }));
            vi.stubGlobal("fetch", fetchMock);
            const client = createClient("http://cache.local///");
            await client.getValue("a b");
            expect(fetchMock).toHaveBeenCalledWith("http://cache.local/v1/keys/a%20b");
          });
        });
    ''')
    return files


REPOS = {
    "acme/gin-lite": gin_lite_files,
    "acme/pyquery-tools": pyquery_tools_files,
    "nimbus/rusty-cache": rusty_cache_files,
}
COMPRESSED_REPOS = {"nimbus/rusty-cache"}
TREE_REPOS = ("acme/gin-lite",)




# ---------------------------------------------------------------------------
# Chunk rows (the ARB corpus row format)
# ---------------------------------------------------------------------------

# A line starts a symbol when one of these matches at its start (first match
# wins); the symbol runs until the line before the next symbol start. These are
# the ARB corpus builder's patterns: Python def/class, JS/TS function/const/class,
# Go func, Rust fn, Java-like methods and type declarations.
SYMBOL_START_PATTERNS = tuple(
    re.compile(pattern)
    for pattern in (
        r"^\s*(?:async\s+)?def\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\(",
        r"^\s*class\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b",
        r"^\s*(?:export\s+)?(?:async\s+)?function\s+(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)\s*\(",
        r"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)\s*=\s*(?:async\s*)?\(?",
        r"^\s*(?:export\s+)?class\s+(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)\b",
        r"^\s*func\s+(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\(",
        r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\(",
        r"^\s*(?:public|private|protected|static|final|abstract|synchronized|\s)+[\w<>\[\], ?]+\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\(",
        r"^\s*(?:public\s+)?(?:class|interface|enum|record)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b",
    )
)


def symbol_spans(text: str) -> list[tuple[str, int, int]]:
    lines = text.splitlines()
    starts: list[tuple[str, int]] = []
    for number, line in enumerate(lines, start=1):
        for pattern in SYMBOL_START_PATTERNS:
            found = pattern.match(line)
            if found:
                starts.append((found.group("name"), number))
                break
    spans = []
    for position, (name, first) in enumerate(starts):
        following = starts[position + 1][1] if position + 1 < len(starts) else len(lines) + 1
        spans.append((name, first, max(first, following - 1)))
    return spans


def chunk_id(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(part) for part in parts).encode("utf-8")).hexdigest()[:24]


def clip(text: str, limit: int = MAX_CHUNK_CHARS) -> str:
    if not text:
        return ""
    text = re.sub(r"\r\n?", "\n", text).strip()
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + "\n...[truncated]"


def make_chunk(repo, commit, path, kind, symbol, start, end, text):
    return {
        "chunk_id": chunk_id(repo, commit, path, kind, symbol, start, end),
        "repo": repo,
        "base_commit": commit,
        "path": path,
        "kind": kind,
        "symbol": symbol,
        "start_line": start,
        "end_line": end,
        "text": clip(text),
    }


def file_chunks(repo: str, commit: str, path: str, text: str) -> list[dict]:
    lines = text.splitlines()
    rows = [make_chunk(repo, commit, path, "file", "", 1, len(lines), text)]
    for name, first, last in symbol_spans(text):
        rows.append(make_chunk(repo, commit, path, "symbol", name, first, last, "\n".join(lines[first - 1 : last])))
    return rows


def check_file_text(repo: str, path: str, text: str) -> None:
    problems = []
    if text != text.strip():
        problems.append("leading/trailing whitespace")
    if len(text) >= MAX_CHUNK_CHARS:
        problems.append(f"{len(text)} characters")
    if "\r" in text or "\x00" in text:
        problems.append("CR or NUL byte")
    if text.splitlines() != text.split("\n"):
        problems.append("line separator other than \\n")
    if problems:
        raise SystemExit(f"{repo}:{path}: {', '.join(problems)}")


def repo_files(repo: str) -> dict[str, str]:
    files = REPOS[repo]()
    for path, text in files.items():
        check_file_text(repo, path, text)
    # Git tree order: byte order of the full path.
    return {path: files[path] for path in sorted(files, key=lambda p: p.encode("utf-8"))}


def corpus_rows(repo: str) -> list[dict]:
    commit = base_commit_for(repo)
    rows: list[dict] = []
    for path, text in repo_files(repo).items():
        rows.extend(file_chunks(repo, commit, path, text))
    return rows


def jsonl_bytes(rows) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows).encode("utf-8")


# ---------------------------------------------------------------------------
# Samples
# ---------------------------------------------------------------------------

GIN, PYQ, RC = "acme/gin-lite", "acme/pyquery-tools", "nimbus/rusty-cache"
PR_HOST = "https://git.example.com"


def positive(label, task_type, repo, pr, query, gold, exercises, evidence=None, extra=None, audit=None):
    """A labeled sample in the ARB envelope."""
    gold = dict(gold)
    gold.setdefault("fix_commit", fake_commit(label))
    gold.setdefault("root_cause_symbols", [])
    for key in ("negative_distractors", "related_tests", "root_cause_files", "supporting_files"):
        gold.setdefault(key, [])
    row = {
        "id": sample_id(label),
        "task_type": task_type,
        "repo": repo,
        "base_commit": base_commit_for(repo),
        "candidate_corpus": {"base_commit": base_commit_for(repo), "type": "repo_at_base_commit"},
        "query": query,
        "gold": gold,
        "metadata": {
            "confidence": "weak",
            "created_at": f"2025-0{1 + pr % 9}-1{pr % 10}T09:30:00Z",
            "evidence": evidence or {"source": "same_pr_changed_tests"},
            "exercises": exercises,
            "label": label,
            "merged_at": f"2025-0{1 + pr % 9}-2{pr % 10}T16:45:00Z",
            "pr": pr,
            "pr_url": f"{PR_HOST}/{repo}/pull/{pr}",
            "synthetic": True,
        },
        "version": 1,
    }
    if audit:
        row["audit"] = audit
    row.update(extra or {})
    return row


def no_gold(label, repo, organic, text, exercises, notes, source_repo=None):
    """A no-gold (abstention) sample: natural (organic issue) or counterfactual."""
    commit = base_commit_for(repo)
    if organic:
        query = {"source": "issue", "text": text}
        gold = {"files": [], "no_gold": True, "reason": "upstream_dependency"}
        metadata = {
            "evidence_summary": "Maintainer resolution classifies the issue as having no repository-local fix.",
            "evidence_urls": [f"{PR_HOST}/{repo}/issues/{int(sample_id(label)[:4], 16) % 500}"],
            "organic": True,
        }
    else:
        query = {"source": "counterfactual_wrong_repo", "text": text}
        gold = {"files": [], "no_gold": True, "reason": "counterfactual_wrong_repo"}
        metadata = {"counterfactual_source_repo": source_repo, "organic": False}
    metadata.update({"exercises": exercises, "label": label, "synthetic": True})
    return {
        "id": sample_id(label),
        "task_type": "abstention",
        "repo": repo,
        "base_commit": commit,
        "candidate_corpus": {"base_commit": commit, "type": "repo_at_base_commit"},
        "query": query,
        "gold": gold,
        "metadata": metadata,
        "audit": {"notes": notes, "verdict": "valid_no_gold"},
    }


def failure_query(raw_signal, check_name, trace_paths, test_names, repo, run):
    return {
        "check_name": check_name,
        "check_url": f"{PR_HOST}/{repo}/actions/runs/{run}",
        "raw_signal": raw_signal,
        "test_names": test_names,
        "trace_paths": trace_paths,
    }


def build_samples() -> list[dict]:
    s: list[dict] = []

    # ----- acme/gin-lite -------------------------------------------------
    s.append(positive(
        "gin/code2test/cleanpath-dotdot", "code2test", GIN, 14,
        {
            "changed_file": "path.go",
            "pr_title": "Fix cleanPath for a trailing \"..\" segment",
            "pr_body": "`cleanPath(\"/abc/def/..\")` returned `/abc` instead of `/abc/`.\n"
                       "The trailing-slash flag was only set for a final `.`; a final `..` now keeps it too.\n\n"
                       "Adds table cases to path_test.go.",
        },
        {"related_tests": ["path_test.go"], "root_cause_files": ["path.go"], "negative_distractors": ["routergroup_test.go"]},
        ["code2test", "gold via related_tests", "easy: gold file named in the query", "escaped quotes and newlines in query"],
    ))
    s.append(positive(
        "gin/code2test/recovery-broken-pipe", "code2test", GIN, 31,
        {
            "changed_file": "middleware/recovery.go",
            "pr_title": "Recovery: don't write a 500 on a connection the client already closed",
            "pr_body": "When the client hangs up mid-response the handler panics with `write: broken pipe` "
                       "(or ECONNRESET → \"connection reset by peer\").\n"
                       "Writing a status afterwards only produces a second warning, so record the error and abort.\n\nCloses #29",
        },
        {
            "files": [{"path": "middleware/recovery_test.go", "reason": "same_pr_changed_tests"}],
            "related_tests": ["middleware/recovery_test.go"],
            "root_cause_files": ["middleware/recovery.go"],
            "negative_distractors": ["middleware/logger.go"],
        },
        ["code2test", "gold.files as {path} objects", "negative_distractors + top-level hard_negative_files", "non-ASCII query (→)"],
        extra={"hard_negative_files": ["middleware/logger_test.go", "response_writer.go"]},
    ))
    s.append(positive(
        "gin/comment2context/tsr-param", "comment2context", GIN, 37,
        {
            "path": "tree.go",
            "line": 233,
            "pr_title": "tree: trailing-slash redirect for param routes",
            "diff_hunk_context": "@@ -228,7 +228,9 @@ func (n *node) getValue(path string, params *Params) (value nodeValue) {\n"
                                 "                             if end < len(path) {\n"
                                 "                                 if len(n.children) > 0 {\n"
                                 "                                     path = path[end:]\n",
            "review_comment": "Won't this also set `tsr` for `/admin/:tool/x`? The redirect in `handleHTTPRequest` would then send "
                              "clients to a path that has no handler.\nCould you add a case next to the existing \"/admin/config\" check?",
        },
        {
            "must_context_files": [{"path": "tree_test.go", "reason": "existing tsr cases"}, {"path": "gin.go", "reason": "redirectTrailingSlash caller"}],
            "root_cause_files": ["tree.go"],
        },
        ["comment2context", "gold via must_context_files (dicts)", "reviewed path is given context"],
        evidence={"review_comment_id": 9101, "comment_commit_id": fake_commit("gin/tsr/comment")},
    ))
    s.append(positive(
        "gin/trace2code/getvalue-index-panic", "trace2code", GIN, 42,
        failure_query(
            "panic: runtime error: index out of range [0] with length 0\n\n"
            "goroutine 23 [running]:\n"
            "github.com/acme/gin-lite.(*node).getValue(0xc000180000, {0xc0001a2001, 0x0}, 0x0)\n"
            "\t/go/src/github.com/acme/gin-lite/tree.go:221 +0x6b4\n"
            "github.com/acme/gin-lite.(*Engine).allowedMethods(0xc00016e000, {0xc0001a2000, 0x1})\n"
            "\t/go/src/github.com/acme/gin-lite/gin.go:118 +0xe5\n"
            "github.com/acme/gin-lite.(*Engine).handleHTTPRequest(0xc00016e000, 0xc000188000)\n"
            "\t/go/src/github.com/acme/gin-lite/gin.go:101 +0x2f1\n"
            "net/http.serverHandler.ServeHTTP({0xc0000a4000}, {0x7f3c, 0xc0000c2000}, 0xc000188000)\n"
            "\t/usr/local/go/src/net/http/server.go:2938 +0x8e",
            "test (ubuntu-latest, 1.21)", ["tree.go", "gin.go"], ["TestEngineMethodNotAllowed"], GIN, 8812,
        ),
        {"root_cause_files": ["tree.go"], "related_tests": ["gin_test.go"], "supporting_files": ["gin.go"], "negative_distractors": ["gin.go"]},
        ["trace2code", "gold via root_cause_files", "Go stack trace naming repo files"],
        evidence={"source": "check_run", "check_run_id": 551201},
    ))
    s.append(positive(
        "gin/testlog2code/clientip-trim", "testlog2code", GIN, 45,
        failure_query(
            "=== RUN   TestContextClientIP\n"
            "    context_test.go:27: expected \"10.0.0.1\", got \"10.0.0.1 \"\n"
            "--- FAIL: TestContextClientIP (0.00s)\nFAIL\nFAIL\tgithub.com/acme/gin-lite\t0.014s",
            "go test", ["context_test.go"], ["TestContextClientIP"], GIN, 8840,
        ),
        {"root_cause_files": ["context.go"], "related_tests": ["context_test.go"]},
        ["testlog2code", "gold via root_cause_files", "test log naming only the test file"],
        evidence={"source": "job_log", "job_id": 77120},
    ))
    s.append(positive(
        "gin/edit2ripple/disallow-unknown-fields", "edit2ripple", GIN, 52,
        {
            "anchor_file": "binding/binding.go",
            "anchor_diff": "@@ -20,6 +20,10 @@ const (\n var (\n \tJSON = jsonBinding{}\n \tForm = formBinding{}\n )\n"
                           "+\n+// EnableDecoderDisallowUnknownFields rejects unknown JSON keys.\n+var EnableDecoderDisallowUnknownFields = false",
            "intent": "binding: add EnableDecoderDisallowUnknownFields\n\nLet callers reject request bodies with keys the target struct "
                      "doesn't declare. The switch sits next to EnableDecoderUseNumber and must be honoured wherever a body is decoded; "
                      "add a test that sends an unexpected key.",
        },
        {"files": ["binding/json.go", "binding/binding_test.go"], "given_files": ["binding/binding.go"]},
        ["edit2ripple", "gold.files strings", "gold.given_files (anchor file)", "hard: gold only reachable through content words"],
        evidence={"source": "git_diff"},
    ))
    s.append(no_gold(
        "gin/abstention/organic-http2-push", GIN, True,
        "Issue title: Server push (HTTP/2) silently ignored behind nginx\n"
        "Issue body excerpt: Calling `http.Pusher` from a handler does nothing when the app runs behind nginx 1.25 with `http2 on;`.\n"
        "nginx dropped `http2_push` — is there a workaround in gin-lite?\n\n```\n$ curl -v --http2 https://example.test/\n< HTTP/2 200\n```",
        ["abstention", "natural_no_gold stratum (organic: true)", "non-ASCII query (—)"],
        "Maintainer: nginx removed HTTP/2 push; nothing to change in the router.",
    ))
    s.append(no_gold(
        "gin/abstention/counterfactual-dollar-quote", GIN, False,
        "Pr Title: Tokenizer: support PostgreSQL dollar-quoted strings\n"
        "Pr Body: `$tag$ … $tag$` bodies were split at the first `$`, so function definitions failed to parse.\n"
        "The scanner now remembers the opening tag.",
        ["abstention", "counterfactual_no_gold stratum (organic: false)", "query from another repository"],
        "Counterfactual: pull request text of acme/pyquery-tools asked against acme/gin-lite.",
        source_repo=PYQ,
    ))
    s.append(positive(
        "gin/code2test/securejson-objects", "code2test", GIN, 58,
        {
            "changed_file": "render/json.go",
            "pr_title": "SecureJSON: only prefix top-level arrays",
            "pr_body": "Objects were prefixed with `while(1);` as well, which broke clients that strip the prefix only for arrays.",
        },
        {"files": ["context_test.go"], "related_tests": ["context_test.go"], "root_cause_files": ["render/json.go"]},
        ["code2test", "gold.files strings take precedence", "hard: test file not named in the query"],
    ))
    s.append(positive(
        "gin/comment2context/cors-credentials", "comment2context", GIN, 63,
        {
            "path": "middleware/cors.go",
            "line": 46,
            "pr_title": "cors: allow credentials",
            "diff_hunk_context": "@@ -40,6 +40,9 @@ func CORS(config CORSConfig) gin.HandlerFunc {\n"
                                 " \t\theader := c.Writer.Header()\n"
                                 " \t\theader.Set(\"Access-Control-Allow-Origin\", responseOrigin(config, origin))\n"
                                 "+\t\tif config.AllowCredentials {\n"
                                 "+\t\t\theader.Set(\"Access-Control-Allow-Credentials\", \"true\")\n+\t\t}",
            "review_comment": "Browsers reject `Access-Control-Allow-Origin: *` together with credentials → echo the request origin "
                              "when AllowCredentials is set.\nThe abort path should also go through the same helper that writes status codes.",
        },
        {
            "context_files": [{"path": "context.go", "reason": "AbortWithStatus and header access"}],
            "given_files": ["middleware/cors.go", "README.md"],
            "root_cause_files": ["middleware/cors.go"],
        },
        ["comment2context", "gold via context_files (dicts)", "gold.given_files plus reviewed path", "tabs in diff hunk"],
        evidence={"review_comment_id": 9188, "comment_commit_id": fake_commit("gin/cors/comment")},
    ))
    s.append(positive(
        "gin/code2test/unlabeled-patch-options", "code2test", GIN, 66,
        {
            "changed_file": "routergroup.go",
            "pr_title": "routergroup: add PATCH and OPTIONS shortcuts",
            "pr_body": "Adds `PATCH` and `OPTIONS` helpers mirroring GET/POST. No tests were changed in this pull request.",
        },
        {"related_tests": [], "root_cause_files": [], "supporting_files": ["routergroup.go"]},
        ["UNLABELED: no gold files and no no_gold flag -> skipped (no_gold_unlabeled)"],
    ))
    s.append(positive(
        "gin/testlog2code/superfluous-writeheader", "testlog2code", GIN, 71,
        failure_query(
            "2025/05/02 10:11:12 http: superfluous response.WriteHeader call from "
            "github.com/acme/gin-lite.(*responseWriter).WriteHeaderNow (response_writer.go:44)\n"
            "[WARNING] Headers were already written. Wanted to override status code 200 with 204\n"
            "--- FAIL: TestCORSPreflight (0.00s)\n    cors_test.go:31: expected status 204, got 200",
            "go test -race", ["response_writer.go"], ["TestCORSPreflight"], GIN, 8903,
        ),
        {"root_cause_files": ["context.go"], "supporting_files": ["middleware/cors.go"]},
        ["testlog2code", "hard: root cause not in the log; the logged file is a hard negative", "top-level hard_negative_files"],
        evidence={"source": "job_log", "job_id": 77301},
        extra={"hard_negative_files": ["response_writer.go"]},
    ))

    # ----- acme/pyquery-tools ---------------------------------------------
    s.append(positive(
        "pyq/code2test/escape-like-backslash", "code2test", PYQ, 12,
        {
            "changed_file": "src/pyquery_tools/escaping.py",
            "pr_title": "escape_like: escape the escape character first",
            "pr_body": "`escape_like(\"C:\\temp\")` produced `C:\\temp`, which LIKE reads as an escaped `t`.\n"
                       "Backslashes are now doubled before `%` and `_` are escaped.",
        },
        {"related_tests": ["tests/test_escaping.py"], "root_cause_files": ["src/pyquery_tools/escaping.py"]},
        ["code2test", "gold via related_tests", "backslashes and quotes in query JSON", "easy: stem of gold in query"],
    ))
    s.append(positive(
        "pyq/code2test/dollar-quoted-strings", "code2test", PYQ, 19,
        {
            "changed_file": "src/pyquery_tools/parser/tokenizer.py",
            "pr_title": "Tokenizer: support PostgreSQL dollar-quoted strings",
            "pr_body": "`$tag$ … $tag$` bodies were split at the first `$` because the scanner treated every `$` as the start "
                       "of a positional parameter (`$1`).\nA naïve fix breaks `$12`, so the scanner now looks ahead for a closing "
                       "`$` before deciding.\n\nAlso documents the placeholder style of each dialect.",
        },
        {
            "files": [{"path": "tests/test_tokenizer.py"}, "tests/test_dialects.py"],
            "related_tests": ["tests/test_tokenizer.py"],
            "root_cause_files": ["src/pyquery_tools/parser/tokenizer.py"],
        },
        ["code2test", "gold.files mixing {path} objects and strings", "non-ASCII query (…, ï)", "two gold files"],
    ))
    s.append(positive(
        "pyq/comment2context/cursor-forgery", "comment2context", PYQ, 23,
        {
            "path": "src/pyquery_tools/pagination.py",
            "line": 18,
            "pr_title": "pagination: opaque cursors",
            "diff_hunk_context": "@@ -12,6 +12,11 @@ class CursorPage:\n+def encode_cursor(position):\n"
                                 "+    raw = json.dumps({\"after\": position}, separators=(\",\", \":\")).encode(\"utf-8\")\n"
                                 "+    return base64.urlsafe_b64encode(raw).decode(\"ascii\").rstrip(\"=\")",
            "review_comment": "This \"opaque\" cursor is just base64'd JSON — anyone can decode it and forge `{\"after\": 0}`.\n"
                              "Do we care? If yes, sign it; if not, say so in the docs and add a round-trip test with a "
                              "non-ASCII key (e.g. \"café\").",
        },
        {
            "must_context_files": [
                {"path": "src/pyquery_tools/pagination.py"},
                {"path": "tests/test_pagination.py"},
                {"path": "docs/usage.md"},
            ],
            "root_cause_files": ["src/pyquery_tools/pagination.py"],
        },
        ["comment2context", "gold contains the reviewed (given) file: never a success", "quotes/newlines/non-ASCII in query"],
        evidence={"review_comment_id": 7002, "comment_commit_id": fake_commit("pyq/cursor/comment")},
    ))
    s.append(positive(
        "pyq/trace2code/comment-stripper-eats-string", "trace2code", PYQ, 27,
        failure_query(
            "Traceback (most recent call last):\n"
            "  File \"/opt/ci/venv/bin/pyq\", line 8, in <module>\n    sys.exit(main())\n"
            "  File \"/opt/ci/venv/lib/python3.11/site-packages/pyquery_tools/cli.py\", line 44, in main\n"
            "    print(format_statement(text, indent=args.indent))\n"
            "  File \"/opt/ci/venv/lib/python3.11/site-packages/pyquery_tools/cli.py\", line 11, in format_statement\n"
            "    stmt = parse_select(strip_sql_comments(sql))\n"
            "  File \"/opt/ci/venv/lib/python3.11/site-packages/pyquery_tools/parser/parse.py\", line 78, in parse_select\n"
            "    parser = Parser(text)\n"
            "  File \"/opt/ci/venv/lib/python3.11/site-packages/pyquery_tools/parser/tokenizer.py\", line 77, in _read_string\n"
            "    raise ParseError(\"unterminated string literal\", start_line, start_column)\n"
            "pyquery_tools.errors.ParseError: unterminated string literal at line 1, column 30\n\n"
            "$ cat query.sql\nSELECT * FROM t WHERE note = '-- not a comment'",
            "pytest (3.11)",
            ["src/pyquery_tools/cli.py", "src/pyquery_tools/parser/parse.py", "src/pyquery_tools/parser/tokenizer.py"],
            ["test_cli.py::test_format_statement"], PYQ, 4410,
        ),
        {
            "root_cause_files": ["src/pyquery_tools/text_utils.py", "src/pyquery_tools/cli.py"],
            "related_tests": ["tests/test_cli.py"],
            "negative_distractors": ["src/pyquery_tools/parser/tokenizer.py"],
        },
        ["trace2code", "Python traceback", "hard: main root cause only named by a function in the trace", "negative_distractors"],
        evidence={"source": "check_run", "check_run_id": 330187},
    ))
    s.append(positive(
        "pyq/testlog2code/order-by-desc", "testlog2code", PYQ, 30,
        failure_query(
            "============================= test session starts ==============================\ncollected 27 items\n\n"
            "tests/test_builder.py ..F..                                              [ 18%]\n\n"
            "=================================== FAILURES ===================================\n"
            "________________________ test_order_by_multiple_columns ________________________\n\n"
            "    def test_order_by_multiple_columns():\n"
            "        sql, _ = QueryBuilder().from_(\"t\").order_by(\"a\", \"-b\").build()\n"
            ">       assert sql == 'SELECT * FROM \"t\" ORDER BY \"a\", \"b\" DESC'\n"
            "E       assert 'SELECT * FRO...\"a\", \"-b\" DESC' == 'SELECT * FRO...\"a\", \"b\" DESC'\n\n"
            "tests/test_builder.py:19: AssertionError\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_builder.py::test_order_by_multiple_columns - AssertionError\n"
            "========================= 1 failed, 26 passed in 0.21s =========================",
            "pytest (3.12)", ["tests/test_builder.py"], ["test_builder.py::test_order_by_multiple_columns"], PYQ, 4422,
        ),
        {"root_cause_files": ["src/pyquery_tools/builder.py"], "related_tests": ["tests/test_builder.py"]},
        ["testlog2code", "pytest log", "gold via root_cause_files"],
        evidence={"source": "job_log", "job_id": 60233},
    ))
    s.append(positive(
        "pyq/edit2ripple/named-placeholders", "edit2ripple", PYQ, 34,
        {
            "anchor_file": "src/pyquery_tools/dialects/base.py",
            "anchor_diff": "@@ -14,7 +14,7 @@ class Dialect:\n-    def placeholder(self, index):\n+    def placeholder(self, index, name=None):\n"
                           "         \"\"\"Return the placeholder for the index-th (1-based) parameter.\"\"\"",
            "intent": "dialects: pass the parameter name to placeholder()\n\nNamed parameters (`:name`) need the name as well as the "
                      "position; every concrete engine and every place that renders a literal value must pass it through.",
        },
        {
            "files": ["src/pyquery_tools/dialects/sqlite.py", "src/pyquery_tools/dialects/postgres.py", "src/pyquery_tools/expressions.py"],
            "given_files": ["src/pyquery_tools/dialects/base.py"],
        },
        ["edit2ripple", "three gold files", "gold.given_files"],
        evidence={"source": "git_diff"},
    ))
    s.append(positive(
        "pyq/comment2context/limit-clause-hook", "comment2context", PYQ, 38,
        {
            "path": "src/pyquery_tools/builder.py",
            "line": 77,
            "pr_title": "builder: support OFFSET without LIMIT",
            "diff_hunk_context": "@@ -74,6 +74,8 @@ class QueryBuilder:\n         if self._order:\n"
                                 "             sql += \" ORDER BY \" + self._render_order()\n"
                                 "+        if self._offset is not None and self._limit is None:\n"
                                 "+            sql += f\" LIMIT -1 OFFSET {self._offset}\"",
            "review_comment": "Please don't hard-code `LIMIT -1` here: that's SQLite-only syntax and Postgres rejects it. "
                              "The per-engine hook for this already exists — route through it.",
        },
        {
            "context_files": [
                {"path": "src/pyquery_tools/dialects/sqlite.py", "reason": "already emits LIMIT -1"},
                {"path": "src/pyquery_tools/dialects/base.py", "reason": "limitClause hook"},
            ],
            "negative_distractors": ["src/pyquery_tools/dialects/postgres.py"],
            "hard_negative_files": ["tests/test_builder.py"],
            "root_cause_files": ["src/pyquery_tools/builder.py"],
        },
        ["comment2context", "gold via context_files", "negative_distractors + gold-level hard_negative_files"],
        evidence={"review_comment_id": 7090, "comment_commit_id": fake_commit("pyq/limit/comment")},
    ))
    s.append(no_gold(
        "pyq/abstention/organic-sqlite-offset", PYQ, True,
        "Issue title: Wrong rows with OFFSET on Python 3.12.0 (macOS, SQLite 3.43.0)\n"
        "Issue body excerpt: The same paginated query returns different rows on macOS with the system SQLite 3.43.0 "
        "than on Linux (3.45.1).\nMaintainer: this is SQLite's query planner, fixed upstream in 3.43.1; nothing to change here. 🙃",
        ["abstention", "natural_no_gold stratum", "non-BMP character in query (emoji)"],
        "Upstream SQLite bug; no repository-local fix.",
    ))
    s.append(no_gold(
        "pyq/abstention/counterfactual-405", PYQ, False,
        "Pr Title: Return 405 with an Allow header instead of 404\n"
        "Pr Body: When a path is registered only for POST, a GET now answers `405 Method Not Allowed` and lists the allowed methods.\n"
        "Guarded by `HandleMethodNotAllowed`.",
        ["abstention", "counterfactual_no_gold stratum"],
        "Counterfactual: pull request text of acme/gin-lite asked against acme/pyquery-tools.",
        source_repo=GIN,
    ))
    s.append(positive(
        "pyq/code2test/cli-indent", "code2test", PYQ, 41,
        {
            "changed_file": "src/pyquery_tools/cli.py",
            "pr_title": "pyq format: honour --indent for the column list",
            "pr_body": "Columns were always indented by two spaces, whatever `--indent` said.",
        },
        {
            "related_tests": ["tests/test_cli.py"],
            "root_cause_files": ["src/pyquery_tools/cli.py"],
            "given_files": ["src/pyquery_tools/cli.py"],
        },
        ["code2test", "gold.given_files (the changed file)"],
    ))
    s.append(positive(
        "pyq/testlog2code/sqlite-offset", "testlog2code", PYQ, 44,
        failure_query(
            "FAILED tests/test_dialects.py::test_sqlite_offset_without_limit - AssertionError: assert 'OFFSET 5' == 'LIMIT -1 OFFSET 5'\n"
            "  - LIMIT -1 OFFSET 5\n  + OFFSET 5\n1 failed, 26 passed in 0.19s",
            "pytest (3.9)", ["tests/test_dialects.py"], ["test_dialects.py::test_sqlite_offset_without_limit"], PYQ, 4501,
        ),
        {"root_cause_files": ["src/pyquery_tools/dialects/sqlite.py"], "related_tests": ["tests/test_dialects.py"]},
        ["testlog2code", "gold via root_cause_files"],
        evidence={"source": "job_log", "job_id": 60410},
    ))
    s.append(positive(
        "pyq/code2test/qualified-star", "code2test", PYQ, 47,
        {
            "changed_file": "src/pyquery_tools/dialects/base.py",
            "pr_title": "Don't quote `*` in qualified names",
            "pr_body": "`quote_identifier(\"users.*\")` rendered `\"users\".\"*\"`, which no database accepts.",
        },
        {
            "related_tests": ["tests/test_escaping.py", "tests/test_builder.py"],
            "root_cause_files": ["src/pyquery_tools/dialects/base.py"],
        },
        ["code2test", "two related tests", "top-level hard_negative_files including a gold file (dropped: gold wins)"],
        extra={"hard_negative_files": ["src/pyquery_tools/escaping.py", "tests/test_builder.py"]},
    ))

    # ----- nimbus/rusty-cache -----------------------------------------------
    s.append(positive(
        "rc/code2test/ttl-deadline", "code2test", RC, 8,
        {
            "changed_file": "src/ttl.rs",
            "pr_title": "ttl: expire entries at their deadline, not one millisecond after",
            "pr_body": "`is_expired` used `now > expire_at`, so an entry inserted with a 10 s TTL was still returned at exactly t+10 s.\n"
                       "Switch to `>=` and make `purge_expired` agree.",
        },
        {"related_tests": ["tests/ttl_tests.rs"], "root_cause_files": ["src/ttl.rs"]},
        ["code2test", "easy: stem of the gold test file in the query", "corpus read from .chunks.jsonl.zst"],
    ))
    s.append(positive(
        "rc/code2test/lfu-aging", "code2test", RC, 11,
        {
            "changed_file": "src/eviction/lfu.rs",
            "pr_title": "LFU: age counters so formerly hot keys can leave",
            "pr_body": "Keys that were hot during warm-up kept huge counts forever and could never be evicted.\n"
                       "Counts are now halved every `capacity` insertions (\"aging\").",
        },
        {
            "files": [{"path": "tests/eviction_tests.rs"}],
            "related_tests": ["tests/eviction_tests.rs"],
            "root_cause_files": ["src/eviction/lfu.rs"],
        },
        ["code2test", "gold.files as {path} objects"],
    ))
    s.append(positive(
        "rc/code2test/retry-abort-signal", "code2test", RC, 16,
        {
            "changed_file": "bindings/ts/src/retry.ts",
            "pr_title": "withRetry: stop retrying once the AbortSignal fires",
            "pr_body": "Cancelling a request (e.g. the user navigates away) still waited out every backoff delay.\n"
                       "`withRetry` now checks `options.signal?.aborted` before each attempt and rejects with the abort reason.",
        },
        {"related_tests": ["bindings/ts/test/client.test.ts"], "root_cause_files": ["bindings/ts/src/retry.ts"]},
        ["code2test", "TypeScript files in a Rust repository", "camelCase identifiers in the query"],
    ))
    s.append(positive(
        "rc/comment2context/shard-hash-bits", "comment2context", RC, 20,
        {
            "path": "src/shard.rs",
            "line": 31,
            "pr_title": "shard: cheaper shard selection",
            "diff_hunk_context": "@@ -28,7 +28,7 @@ impl<K: Hash + Eq + Clone, V: Clone + Default> ShardedCache<K, V> {\n"
                                 "         let mut hasher = DefaultHasher::new();\n         key.hash(&mut hasher);\n"
                                 "-        (hasher.finish() & self.mask) as usize\n+        (hasher.finish() >> 7 & self.mask) as usize",
            "review_comment": "Shifting by 7 before masking throws away the well-mixed low bits; with 4 shards one shard now gets almost "
                              "nothing. The per-shard entry counts printed by the CLI make this easy to spot — can you compare them before/after?",
        },
        {
            "must_context_files": [{"path": "src/bin/cachectl.rs"}, {"path": "tests/shard_tests.rs"}],
            "root_cause_files": ["src/shard.rs"],
        },
        ["comment2context", "gold via must_context_files", "hard: CLI file only described, not named"],
        evidence={"review_comment_id": 3120, "comment_commit_id": fake_commit("rc/shard/comment")},
    ))
    s.append(positive(
        "rc/trace2code/remaining-underflow", "trace2code", RC, 24,
        failure_query(
            "running 3 tests\ntest entry_visible_until_deadline ... ok\ntest remaining_counts_down ... ok\n"
            "test purge_removes_only_expired ... FAILED\n\nfailures:\n\n---- purge_removes_only_expired stdout ----\n"
            "thread 'purge_removes_only_expired' panicked at src/ttl.rs:103:51:\nattempt to subtract with overflow\n"
            "stack backtrace:\n   0: rust_begin_unwind\n   1: core::panicking::panic_fmt\n"
            "   2: core::panicking::panic_const::panic_const_sub_overflow\n"
            "   3: rusty_cache::ttl::TtlCache<K,V,C>::remaining::{{closure}}\n             at ./src/ttl.rs:103:51\n"
            "   4: ttl_tests::purge_removes_only_expired\n             at ./tests/ttl_tests.rs:25:5\n\n"
            "failures:\n    purge_removes_only_expired\n\ntest result: FAILED. 2 passed; 1 failed",
            "cargo test", ["src/ttl.rs", "tests/ttl_tests.rs"], ["purge_removes_only_expired"], RC, 2207,
        ),
        {"root_cause_files": ["src/ttl.rs"], "related_tests": ["tests/ttl_tests.rs"]},
        ["trace2code", "Rust panic with backtrace"],
        evidence={"source": "check_run", "check_run_id": 120907},
        extra={"hard_negative_files": ["src/clock.rs"]},
    ))
    s.append(positive(
        "rc/testlog2code/shard-spread", "testlog2code", RC, 28,
        failure_query(
            "test entries_spread_across_shards ... FAILED\n\nfailures:\n\n---- entries_spread_across_shards stdout ----\n"
            "thread 'entries_spread_across_shards' panicked at tests/shard_tests.rs:10:9:\nshard 3 is empty\n"
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n"
            "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n"
            "error: test failed, to rerun pass `--test shard_tests`",
            "cargo test", ["tests/shard_tests.rs"], ["entries_spread_across_shards"], RC, 2231,
        ),
        {"root_cause_files": ["src/shard.rs"], "related_tests": ["tests/shard_tests.rs"]},
        ["testlog2code", "cargo test log"],
        evidence={"source": "job_log", "job_id": 31002},
    ))
    s.append(positive(
        "rc/edit2ripple/monotonic-clock", "edit2ripple", RC, 33,
        {
            "anchor_file": "src/clock.rs",
            "anchor_diff": "@@ -4,8 +4,8 @@ use std::time::{Duration, SystemTime, UNIX_EPOCH};\n"
                           " /// A source of \"now\" so TTL expiry can be tested without sleeping.\n pub trait Clock {\n"
                           "-    /// Milliseconds since the Unix epoch.\n-    fn now_millis(&self) -> u64;\n"
                           "+    /// Monotonic ticks (milliseconds) since an arbitrary origin.\n+    fn now_ticks(&self) -> u64;\n }",
            "intent": "clock: switch the Clock trait from wall-clock milliseconds to a monotonic tick\n\nNTP adjustments made entries "
                      "expire early or live forever. Every deadline computation and remaining-time calculation has to move to `now_ticks()`.",
        },
        {"files": ["src/ttl.rs", "tests/ttl_tests.rs"], "given_files": ["src/clock.rs"]},
        ["edit2ripple", "gold.given_files"],
        evidence={"source": "git_diff"},
    ))
    s.append(positive(
        "rc/edit2ripple/zero-capacity-error", "edit2ripple", RC, 36,
        {
            "anchor_file": "src/error.rs",
            "anchor_diff": "@@ -5,6 +5,8 @@ pub enum CacheError {\n     /// A configuration value was out of range.\n"
                           "     InvalidConfig(String),\n+    /// A cache was asked to hold nothing.\n+    ZeroCapacity,",
            "intent": "error: add CacheError::ZeroCapacity and return it instead of panicking\n\nConstructors that currently assert on a "
                      "zero capacity should return a Result; the environment loader should map a parsed 0 to the new variant.",
        },
        {
            "files": ["src/lru.rs", "src/config.rs"],
            "given_files": ["src/error.rs"],
            "negative_distractors": ["src/ttl.rs"],
        },
        ["edit2ripple", "hard: gold only reachable through content words", "negative_distractors"],
        evidence={"source": "git_diff"},
    ))
    s.append(no_gold(
        "rc/abstention/organic-musl-linker", RC, True,
        "Issue title: `cargo build` fails on Alpine (musl): linking with `cc` failed\n"
        "Issue body excerpt: ```\nerror: linking with `cc` failed: exit status: 1\n"
        "  = note: ld: cannot find -lgcc_s\n```\n"
        "Maintainer: the musl toolchain image is missing libgcc; install `build-base`. Nothing in rusty-cache to change.",
        ["abstention", "natural_no_gold stratum"],
        "Toolchain problem outside the repository.",
    ))
    s.append(no_gold(
        "rc/abstention/counterfactual-escape-like", RC, False,
        "Pr Title: Escape backslashes in LIKE patterns\n"
        "Pr Body: User input such as `C:\\temp\\new` produced a pattern that matched `C:tempnew`.\n"
        "Backslashes are doubled before `%` and `_` are escaped.",
        ["abstention", "counterfactual_no_gold stratum", "backslashes in query"],
        "Counterfactual: pull request text of acme/pyquery-tools asked against nimbus/rusty-cache.",
        source_repo=PYQ,
    ))
    s.append(positive(
        "rc/comment2context/getorload-warning", "comment2context", RC, 39,
        {
            "path": "bindings/ts/src/client.ts",
            "line": 63,
            "pr_title": "client: getOrLoad",
            "diff_hunk_context": "@@ -58,6 +58,12 @@ export class CacheClient {\n+    let loaded: T;\n+    try {\n"
                                 "+      loaded = await loader();\n+    } catch (error) {\n+      console.warn(`cache miss for ${key}`);\n+      throw error;",
            "review_comment": "nit: the warning says \"cache miss\" but this branch is a *loader* failure, not a miss.\n"
                              "Also: should a failed loader be retried with the same backoff policy the HTTP calls use, "
                              "instead of failing on the first rejection?",
        },
        {
            "context_files": [{"path": "bindings/ts/src/retry.ts", "reason": "backoff policy"}],
            "given_files": ["bindings/ts/src/index.ts"],
            "root_cause_files": ["bindings/ts/src/client.ts"],
        },
        ["comment2context", "gold.given_files without the reviewed path (path is still given context)", "context_files"],
        evidence={"review_comment_id": 3177, "comment_commit_id": fake_commit("rc/getorload/comment")},
    ))
    return s


# Own re-statement of the ARB label rules, used only to validate the samples.
def gold_paths(sample: dict) -> list[str]:
    gold = sample.get("gold") or {}
    if gold.get("no_gold") is True:
        return []

    def paths(values):
        out = []
        for value in values or []:
            path = value if isinstance(value, str) else (value.get("path") if isinstance(value, dict) else None)
            if path and path not in out:
                out.append(path)
        return out

    found = paths(gold.get("files"))
    if found:
        return found
    if sample["task_type"] == "code2test":
        return paths(gold.get("related_tests"))
    if sample["task_type"] == "comment2context":
        found = paths(gold.get("must_context_files") or gold.get("context_files"))
        if found:
            return found
    return paths(gold.get("root_cause_files")) or paths(gold.get("related_tests"))


def stratum(sample: dict) -> str:
    gold = sample.get("gold") or {}
    if gold.get("no_gold") is True:
        return "natural_no_gold" if (sample.get("metadata") or {}).get("organic") is True else "counterfactual_no_gold"
    return "positive" if gold_paths(sample) else "unlabeled"


def validate_samples(samples: list[dict], corpus_paths: dict[str, set[str]]) -> None:
    ids = [row["id"] for row in samples]
    assert len(ids) == len(set(ids)), "duplicate sample ids"
    assert all(re.fullmatch(r"[0-9a-f]{24}", i) for i in ids)
    assert sum(stratum(row) == "unlabeled" for row in samples) == 1, "exactly one unlabeled row"
    for row in samples:
        known = corpus_paths[row["repo"]]
        gold = row["gold"]
        referenced = list(gold_paths(row))
        for key in ("given_files", "negative_distractors", "hard_negative_files", "related_tests", "root_cause_files", "supporting_files"):
            referenced += [p if isinstance(p, str) else p["path"] for p in gold.get(key) or []]
        for key in ("must_context_files", "context_files", "files"):
            referenced += [p if isinstance(p, str) else p["path"] for p in gold.get(key) or []]
        referenced += row.get("hard_negative_files") or []
        query = row["query"]
        for key in ("changed_file", "path", "anchor_file"):
            if key in query:
                referenced.append(query[key])
        referenced += query.get("trace_paths") or []
        missing = sorted(set(p for p in referenced if p not in known))
        if missing:
            raise SystemExit(f"sample {row['metadata']['label']}: paths not in corpus: {missing}")


# ---------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------


def zstd_bytes(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data)


def write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def tar_bytes(root: Path) -> bytes:
    """Pack every file and directory under root, sorted, with fixed metadata."""
    entries = sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix())
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for entry in entries:
            info = tarfile.TarInfo(entry.relative_to(root).as_posix())
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if entry.is_dir():
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                archive.addfile(info)
            else:
                data = entry.read_bytes()
                info.size = len(data)
                info.mode = 0o644
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def readme_text(samples: list[dict], manifest: list[dict]) -> str:
    counts: dict[str, dict[str, int]] = {"task": {}, "stratum": {}, "repo": {}}
    for row in samples:
        for group, key in (("task", row["task_type"]), ("stratum", stratum(row)), ("repo", row["repo"])):
            counts[group][key] = counts[group].get(key, 0) + 1

    def fmt(group):
        return ", ".join(f"{key} {value}" for key, value in sorted(counts[group].items()))

    repo_lines = []
    for item in manifest:
        kind = "zstd-compressed" if item["chunks_path"].endswith(".zst") else "plain"
        repo_lines.append(
            f"| `{item['repo']}` | `{item['base_commit']}` | {item['file_count']} | {item['symbol_count']} | "
            f"{item['chunk_count']} | {kind} |"
        )
    sample_lines = []
    for row in samples:
        gold = ", ".join(f"`{p}`" for p in gold_paths(row)) or "-"
        rules = "; ".join(row["metadata"]["exercises"])
        sample_lines.append(
            f"| `{row['id']}` | {row['repo'].split('/')[1]} | {row['task_type']} | {stratum(row)} | {gold} | {rules} |"
        )
    return "\n".join([
        "# Bundled test data",
        "",
        "Synthetic data in the shape of an Agent Retrieval Bench (ARB) release, for the plugin's own tests.",
        "Everything here is written by `make_testdata.py`; do not edit the outputs by hand. Regenerate with",
        "",
        "```",
        "python testdata/make_testdata.py",
        "```",
        "",
        f"(standard library plus `zstandard`). Two runs write identical bytes: fixed zstd level ({ZSTD_LEVEL}),",
        "no timestamps, tar members sorted by name with mtime 0, uid/gid 0, empty owner names, mode 0644",
        "for files and 0755 for directories.",
        "",
        "## Contents",
        "",
        f"- `release/benchmark/{RELEASE}/samples.jsonl` - {len(samples)} samples in the ARB envelope.",
        f"- `release/corpus/{RELEASE}/corpus_manifest.jsonl` - one row per (repo, base_commit); `chunks_path` is",
        "  relative to the release root (`release/`).",
        f"- `release/corpus/{RELEASE}/OWNER__NAME/COMMIT.chunks.jsonl` (two repositories) and",
        "  `...chunks.jsonl.zst` (one repository, same rows, zstd-compressed).",
        f"- `agent_retrieval_bench_{RELEASE}.tar.zst` - the same `benchmark/` and `corpus/` trees as one",
        f"  zstd-compressed tar (members `benchmark/{RELEASE}/samples.jsonl`, `corpus/{RELEASE}/...`).",
        "- `trees/acme__gin-lite/` - the files of `acme/gin-lite` as a plain directory (byte-identical to the",
        "  `text` of its `kind: \"file\"` chunk rows), for tests of directory snapshots.",
        "",
        "## Repositories",
        "",
        "Three invented code bases. Base commits are fake: the SHA-1 of `synthetic-base-commit:OWNER/NAME`.",
        "",
        "| repo | base_commit | files | symbol chunks | chunk rows | corpus file |",
        "|---|---|---|---|---|---|",
        *repo_lines,
        "",
        "Chunk rows follow the ARB corpus format (keys `chunk_id`, `repo`, `base_commit`, `path`, `kind`,",
        "`symbol`, `start_line`, `end_line`, `text`; one JSON object per line, `sort_keys`, non-ASCII kept",
        "as is): per file one `kind: \"file\"` row with the whole text, then one `kind: \"symbol\"` row per",
        "line that starts a definition (Python `def`/`class`, JS/TS `function`/`const`/`class`, Go `func`,",
        "Rust `fn`, Java-like method lines, type declarations), each running to the line before the next",
        "definition. `chunk_id` is the first 24 hex digits of the SHA-256 of repo, base_commit, path, kind,",
        "symbol, start_line and end_line joined by U+001F. File texts have no leading or trailing",
        "whitespace, only `\\n` line endings and fewer than 8,000 characters, so no row is truncated.",
        "Files are listed in byte order of their paths (the order of `git ls-tree -r`).",
        "",
        "## Samples",
        "",
        f"By task type: {fmt('task')}.",
        f"By stratum: {fmt('stratum')}.",
        f"By repository: {fmt('repo')}.",
        "",
        "Ids are the first 24 hex digits of the SHA-1 of `synthetic-sample:LABEL` (`metadata.label`).",
        "`metadata.exercises` names the rules a sample is there for. Rules, as the plugin applies them:",
        "",
        "- query text = `json.dumps(query, ensure_ascii=False, sort_keys=True)`; several queries contain",
        "  newlines, double quotes, backslashes, tabs, non-ASCII (`ï`, `→`, `—`, `…`, `é`) and one emoji.",
        "- gold files: `gold.files` (strings or `{path}` objects) if non-empty; else for code2test",
        "  `related_tests`; else for comment2context `must_context_files`, else `context_files`; else",
        "  `root_cause_files`, else `related_tests`. `no_gold: true` means no gold files.",
        "- exactly one row is unlabeled (a code2test row with empty `related_tests` and no `files`): it must be",
        "  skipped and counted as `no_gold_unlabeled`.",
        "- given context: `gold.given_files`, plus the reviewed `query.path` of comment2context rows (the",
        "  bench's own `given_files()` adds the reviewed path only when `gold.given_files` is empty; one",
        "  comment2context row has both, so the two rules give different given sets there).",
        "- hard negatives: `gold.negative_distractors`, `hard_negative_files` at top level or in `gold`, minus",
        "  gold files.",
        "- strata: `positive`, `natural_no_gold` (`metadata.organic: true`), `counterfactual_no_gold`.",
        "- every path a sample names (gold, given, negatives, changed/anchor/reviewed file, trace paths)",
        "  exists in its repository's corpus.",
        "",
        "| id | repo | task | stratum | gold files | exercises |",
        "|---|---|---|---|---|---|",
        *sample_lines,
        "",
    ])


def main() -> None:
    release = HERE / "release"
    trees = HERE / "trees"
    archive = HERE / f"agent_retrieval_bench_{RELEASE}.tar.zst"
    for stale in (release, trees):
        if stale.exists():
            shutil.rmtree(stale)

    manifest: list[dict] = []
    corpus_paths: dict[str, set[str]] = {}
    for repo in sorted(REPOS):
        commit = base_commit_for(repo)
        rows = corpus_rows(repo)
        corpus_paths[repo] = {row["path"] for row in rows if row["kind"] == "file"}
        relative = f"corpus/{RELEASE}/{repo.replace('/', '__')}/{commit}.chunks.jsonl"
        data = jsonl_bytes(rows)
        if repo in COMPRESSED_REPOS:
            relative += ".zst"
            data = zstd_bytes(data)
        write_bytes(release / relative, data)
        manifest.append({
            "repo": repo,
            "base_commit": commit,
            "status": "ok",
            "chunks_path": relative,
            "chunk_count": len(rows),
            "file_count": sum(row["kind"] == "file" for row in rows),
            "symbol_count": sum(row["kind"] == "symbol" for row in rows),
        })
    write_bytes(release / f"corpus/{RELEASE}/corpus_manifest.jsonl", jsonl_bytes(manifest))

    samples = build_samples()
    validate_samples(samples, corpus_paths)
    write_bytes(release / f"benchmark/{RELEASE}/samples.jsonl", jsonl_bytes(samples))

    for repo in TREE_REPOS:
        for path, text in repo_files(repo).items():
            write_bytes(trees / repo.replace("/", "__") / path, text.encode("utf-8"))

    write_bytes(archive, zstd_bytes(tar_bytes(release)))
    (HERE / "README.md").write_text(readme_text(samples, manifest), encoding="utf-8")
    print(f"wrote {len(samples)} samples, {sum(m['chunk_count'] for m in manifest)} chunk rows, {archive.name}")


if __name__ == "__main__":
    main()
