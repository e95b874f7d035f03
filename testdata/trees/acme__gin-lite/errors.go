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