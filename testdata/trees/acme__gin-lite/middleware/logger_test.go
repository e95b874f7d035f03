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