package gin

import "testing"

var cleanTests = []struct {
	path, result string
}{
	{"", "/"},
	{"/", "/"},
	{"/abc/", "/abc/"},
	{"/a/b/c", "/a/b/c"},
	{"//", "/"},
	{"/abc//def//ghi", "/abc/def/ghi"},
	{"/a/./b/", "/a/b/"},
	{"/abc/def/..", "/abc/"},
	{"/abc/def/../../..", "/"},
	{"abc/../../././../def", "/def"},
}

func TestCleanPath(t *testing.T) {
	for _, test := range cleanTests {
		if s := cleanPath(test.path); s != test.result {
			t.Errorf("cleanPath(%q) = %q, want %q", test.path, s, test.result)
		}
	}
}