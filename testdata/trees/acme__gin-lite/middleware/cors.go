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