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