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