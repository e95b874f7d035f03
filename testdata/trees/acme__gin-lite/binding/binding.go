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