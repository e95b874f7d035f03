package main

import (
	"net/http"

	gin "github.com/acme/gin-lite"
	"github.com/acme/gin-lite/middleware"
)

type loginForm struct {
	User     string `form:"user" binding:"required"`
	Password string `form:"password" binding:"required"`
}

func main() {
	r := gin.Default(middleware.Logger(), middleware.Recovery())
	r.GET("/ping", func(c *gin.Context) {
		c.String(http.StatusOK, "pong")
	})
	api := r.Group("/api/v1")
	api.GET("/users/:id", func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"id": c.Param("id"), "verbose": c.DefaultQuery("verbose", "false")})
	})
	api.POST("/login", func(c *gin.Context) {
		var form loginForm
		if err := c.ShouldBindJSON(&form); err != nil {
			c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
			return
		}
		c.JSON(http.StatusOK, gin.H{"status": "you are logged in"})
	})
	r.Run(":8080")
}