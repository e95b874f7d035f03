package binding

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type sample struct {
	Name  string   `form:"name" binding:"required"`
	Tags  []string `form:"tag"`
	Count int      `form:"count"`
}

func TestDefaultBinding(t *testing.T) {
	if Default(http.MethodPost, MIMEJSON) != JSON {
		t.Fatal("POST + application/json should pick JSON")
	}
	if Default(http.MethodGet, MIMEJSON) != Form {
		t.Fatal("GET should always pick Form")
	}
}

func TestFormBindingSlice(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/?name=x&tag=a&tag=b&count=3", nil)
	var obj sample
	if err := Form.Bind(req, &obj); err != nil {
		t.Fatal(err)
	}
	if len(obj.Tags) != 2 || obj.Count != 3 {
		t.Fatalf("unexpected %+v", obj)
	}
}

func TestJSONBindingRequired(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"count": 1}`))
	var obj sample
	if err := JSON.Bind(req, &obj); err == nil {
		t.Fatal("expected required-field error")
	}
}