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