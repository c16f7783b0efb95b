package main

import (
	"context"
	"io"
	"log"
	"net"
)

// apiProxy stands in for the kubernetes Service: it listens on an address pods can reach
// (the bridge) and forwards TCP to the API server, which may listen on loopback only.
func apiProxy(ctx context.Context, listen, target string) (net.Listener, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	log.Printf("proxy: %s -> %s (kubernetes service for pods)", listen, target)
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				var d net.Dialer
				up, err := d.DialContext(ctx, "tcp", target)
				if err != nil {
					log.Printf("proxy: dial %s: %v", target, err)
					return
				}
				defer up.Close()
				done := make(chan struct{}, 2)
				go func() { io.Copy(up, conn); up.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
				go func() { io.Copy(conn, up); conn.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
				<-done
				<-done
			}()
		}
	}()
	return ln, nil
}
