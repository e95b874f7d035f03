package gin

import "strings"

type nodeType uint8

const (
	static nodeType = iota
	root
	param
	catchAll
)

type node struct {
	path      string
	indices   string
	wildChild bool
	nType     nodeType
	priority  uint32
	children  []*node
	handlers  HandlersChain
	fullPath  string
}

type nodeValue struct {
	handlers HandlersChain
	params   *Params
	tsr      bool
	fullPath string
}

func longestCommonPrefix(a, b string) int {
	i := 0
	max := len(a)
	if len(b) < max {
		max = len(b)
	}
	for i < max && a[i] == b[i] {
		i++
	}
	return i
}

func countParams(path string) uint16 {
	n := strings.Count(path, ":") + strings.Count(path, "*")
	return uint16(n)
}

// findWildcard returns the first wildcard segment and its index.
func findWildcard(path string) (wildcard string, i int, valid bool) {
	for start, c := range []byte(path) {
		if c != ':' && c != '*' {
			continue
		}
		valid = true
		for end, c := range []byte(path[start+1:]) {
			switch c {
			case '/':
				return path[start : start+1+end], start, valid
			case ':', '*':
				valid = false
			}
		}
		return path[start:], start, valid
	}
	return "", -1, false
}

// addRoute adds a node with the given handlers to the path.
func (n *node) addRoute(path string, handlers HandlersChain) {
	fullPath := path
	n.priority++
	if len(n.path) == 0 && len(n.children) == 0 {
		n.insertChild(path, fullPath, handlers)
		n.nType = root
		return
	}
walk:
	for {
		i := longestCommonPrefix(path, n.path)
		if i < len(n.path) {
			child := node{
				path:      n.path[i:],
				wildChild: n.wildChild,
				indices:   n.indices,
				children:  n.children,
				handlers:  n.handlers,
				priority:  n.priority - 1,
				fullPath:  n.fullPath,
			}
			n.children = []*node{&child}
			n.indices = string([]byte{n.path[i]})
			n.path = path[:i]
			n.handlers = nil
			n.wildChild = false
		}
		if i < len(path) {
			path = path[i:]
			c := path[0]
			if n.wildChild {
				n = n.children[0]
				n.priority++
				if len(path) >= len(n.path) && n.path == path[:len(n.path)] && n.nType != catchAll {
					continue walk
				}
				panic("'" + path + "' conflicts with existing wildcard '" + n.path + "' in '" + fullPath + "'")
			}
			for idx := 0; idx < len(n.indices); idx++ {
				if c == n.indices[idx] {
					n = n.children[idx]
					continue walk
				}
			}
			if c != ':' && c != '*' {
				n.indices += string([]byte{c})
				child := &node{fullPath: fullPath}
				n.children = append(n.children, child)
				n = child
			}
			n.insertChild(path, fullPath, handlers)
			return
		}
		if n.handlers != nil {
			panic("handlers are already registered for path '" + fullPath + "'")
		}
		n.handlers = handlers
		n.fullPath = fullPath
		return
	}
}

func (n *node) insertChild(path string, fullPath string, handlers HandlersChain) {
	for {
		wildcard, i, valid := findWildcard(path)
		if i < 0 {
			break
		}
		if !valid || len(wildcard) < 2 {
			panic("invalid wildcard in path '" + fullPath + "'")
		}
		if wildcard[0] == ':' {
			if i > 0 {
				n.path = path[:i]
				path = path[i:]
			}
			child := &node{nType: param, path: wildcard, fullPath: fullPath}
			n.children = []*node{child}
			n.wildChild = true
			n = child
			n.priority++
			if len(wildcard) < len(path) {
				path = path[len(wildcard):]
				next := &node{priority: 1, fullPath: fullPath}
				n.children = []*node{next}
				n = next
				continue
			}
			n.handlers = handlers
			return
		}
		if i+len(wildcard) != len(path) {
			panic("catch-all routes are only allowed at the end of the path in '" + fullPath + "'")
		}
		n.path = path[:i]
		child := &node{wildChild: true, nType: catchAll, fullPath: fullPath}
		n.children = []*node{child}
		n.indices = string('/')
		child.children = []*node{{path: path[i:], nType: catchAll, handlers: handlers, priority: 1, fullPath: fullPath}}
		return
	}
	n.path = path
	n.handlers = handlers
	n.fullPath = fullPath
}

// getValue returns the handlers registered for path; tsr reports whether a
// redirect to the same path with(out) a trailing slash would succeed.
func (n *node) getValue(path string, params *Params) (value nodeValue) {
walk:
	for {
		prefix := n.path
		if len(path) > len(prefix) {
			if path[:len(prefix)] == prefix {
				path = path[len(prefix):]
				if !n.wildChild {
					idxc := path[0]
					for i, c := range []byte(n.indices) {
						if c == idxc {
							n = n.children[i]
							continue walk
						}
					}
					value.tsr = path == "/" && n.handlers != nil
					return
				}
				n = n.children[0]
				switch n.nType {
				case param:
					end := 0
					for end < len(path) && path[end] != '/' {
						end++
					}
					if params != nil {
						*params = append(*params, Param{Key: n.path[1:], Value: path[:end]})
					}
					if end < len(path) {
						if len(n.children) > 0 {
							path = path[end:]
							n = n.children[0]
							continue walk
						}
						value.tsr = len(path) == end+1
						return
					}
					value.handlers = n.handlers
					value.fullPath = n.fullPath
					return
				case catchAll:
					if params != nil {
						*params = append(*params, Param{Key: n.path[2:], Value: path})
					}
					value.handlers = n.handlers
					value.fullPath = n.fullPath
					return
				}
			}
		}
		if path == prefix {
			value.handlers = n.handlers
			value.fullPath = n.fullPath
			if value.handlers == nil && path == "/" && n.wildChild && n.nType != root {
				value.tsr = true
			}
			return
		}
		value.tsr = path == "/" || (len(prefix) == len(path)+1 && prefix[len(path)] == '/' && path == prefix[:len(prefix)-1] && n.handlers != nil)
		return
	}
}