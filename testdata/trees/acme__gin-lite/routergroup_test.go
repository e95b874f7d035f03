package gin

import "testing"

func TestRouterGroupBasePath(t *testing.T) {
	router := New()
	v1 := router.Group("/v1")
	admin := v1.Group("/admin/")
	if admin.basePath != "/v1/admin/" {
		t.Fatalf("basePath = %q", admin.basePath)
	}
}

func TestJoinPaths(t *testing.T) {
	cases := map[[2]string]string{
		{"/", ""}:        "/",
		{"/a", "b/"}:     "/a/b/",
		{"/a/", "/b"}:    "/a/b",
		{"/a", "../b"}:   "/b",
	}
	for in, want := range cases {
		if got := joinPaths(in[0], in[1]); got != want {
			t.Errorf("joinPaths(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}