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