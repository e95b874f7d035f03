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