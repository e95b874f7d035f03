package gin

// cleanPath is the URL version of path.Clean: it returns a canonical URL
// path for p, eliminating . and .. elements and repeated slashes.
//
//  1. Replace multiple slashes with a single slash.
//  2. Eliminate each . path name element (the current directory).
//  3. Eliminate each inner .. path name element and the non-.. element before it.
//  4. Eliminate .. elements that begin a rooted path.
//
// A trailing slash is kept.
func cleanPath(p string) string {
	const stackBufSize = 128
	if p == "" {
		return "/"
	}
	buf := make([]byte, 0, stackBufSize)
	n := len(p)
	r := 1
	w := 1
	if p[0] != '/' {
		r = 0
		buf = bufApp(buf, p, 0, '/')
	}
	trailing := n > 1 && p[n-1] == '/'
	for r < n {
		switch {
		case p[r] == '/':
			r++
		case p[r] == '.' && r+1 == n:
			trailing = true
			r++
		case p[r] == '.' && p[r+1] == '/':
			r += 2
		case p[r] == '.' && p[r+1] == '.' && (r+2 == n || p[r+2] == '/'):
			r += 3
			if w > 1 {
				w--
				for w > 1 && buf[w] != '/' {
					w--
				}
			}
		default:
			if w > 1 {
				buf = bufApp(buf, p, w, '/')
				w++
			}
			for r < n && p[r] != '/' {
				buf = bufApp(buf, p, w, p[r])
				w++
				r++
			}
		}
	}
	if trailing && w > 1 {
		buf = bufApp(buf, p, w, '/')
		w++
	}
	if len(buf) == 0 {
		return p[:w]
	}
	return string(buf[:w])
}

// bufApp lazily allocates the buffer only when the cleaned path differs.
func bufApp(buf []byte, s string, w int, c byte) []byte {
	if len(buf) == 0 {
		if s[w] == c {
			return buf
		}
		buf = make([]byte, len(s)+1)
		copy(buf, s[:w])
	}
	buf[w] = c
	return buf
}