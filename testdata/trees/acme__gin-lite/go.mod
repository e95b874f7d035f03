module github.com/acme/gin-lite

go 1.21