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