// A closed-loop admission client built on Go's net/http, as kube-apiserver's webhook client is: keep-alive
// connections pooled and reused by the standard Transport, which retries a request only when Go itself decides it
// may (a POST only when nothing of it was written). Each of -clients goroutines posts -body to -url until a request
// fails to connect (refused, or reset while connecting, which Linux answers when the listener closes during the
// handshake: either way the listener is gone and nothing of the request was sent) or -seconds pass, then the program
// prints one JSON object: the answers, the refusals and every other failure.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

func main() {
	url := flag.String("url", "", "https URL to POST to")
	caFile := flag.String("ca", "", "CA bundle (PEM)")
	bodyFile := flag.String("body", "", "request body")
	clients := flag.Int("clients", 8, "concurrent closed loops")
	seconds := flag.Float64("seconds", 30, "stop after this long")
	flag.Parse()
	ca, err := os.ReadFile(*caFile)
	if err != nil {
		panic(err)
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		panic(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		MaxIdleConnsPerHost: *clients,
	}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	deadline := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	var mu sync.Mutex
	answers, refused := 0, 0
	failures := []string{}
	var wg sync.WaitGroup
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				response, err := client.Post(*url, "application/json", bytes.NewReader(body))
				if err != nil {
					mu.Lock()
					var dial *net.OpError
					if errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &dial) && dial.Op == "dial") {
						refused++ // nothing of the request was sent: the listener is gone
					} else {
						failures = append(failures, err.Error())
					}
					mu.Unlock()
					return
				}
				_, err = io.Copy(io.Discard, response.Body)
				response.Body.Close()
				mu.Lock()
				if err != nil || response.StatusCode != http.StatusOK {
					failures = append(failures, fmt.Sprintf("status %d, %v", response.StatusCode, err))
				} else {
					answers++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	out, _ := json.Marshal(map[string]any{"answers": answers, "refused": refused, "failures": failures})
	fmt.Println(string(out))
}
