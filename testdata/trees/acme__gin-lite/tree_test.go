package gin

import "testing"

func fakeHandler(string) HandlersChain {
	return HandlersChain{func(c *Context) {}}
}

func TestTreeAddAndGet(t *testing.T) {
	tree := &node{}
	routes := []string{"/hi", "/contact", "/users/:id", "/users/:id/posts", "/static/*filepath"}
	for _, route := range routes {
		tree.addRoute(route, fakeHandler(route))
	}
	params := make(Params, 0, 4)
	value := tree.getValue("/users/42/posts", &params)
	if value.handlers == nil || params[0].Value != "42" {
		t.Fatalf("route not found or wrong param: %+v", params)
	}
}

func TestTreeWildcardConflict(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("expected a panic for conflicting wildcards")
		}
	}()
	tree := &node{}
	tree.addRoute("/users/:id", fakeHandler("a"))
	tree.addRoute("/users/:name", fakeHandler("b"))
}

func TestTreeTrailingSlashRedirect(t *testing.T) {
	tree := &node{}
	for _, route := range []string{"/hi", "/b/", "/admin/:tool/"} {
		tree.addRoute(route, fakeHandler(route))
	}
	for _, path := range []string{"/hi/", "/b", "/admin/config"} {
		if value := tree.getValue(path, nil); !value.tsr {
			t.Errorf("expected tsr for %q", path)
		}
	}
}