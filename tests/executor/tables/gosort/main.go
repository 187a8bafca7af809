// Command gosort prints test vectors for desched's port of Go's sort.Slice (executor/gosort.py): inputs of many
// shapes and sizes, sorted by Go's own sort.Slice with a strict (<) and a non-strict (<=) comparator, as JSON.
//
// Regenerate with: go run tests/executor/tables/gosort/main.go > tests/executor/tables/gosort/vectors.json
// (the file records the Go release that made it).
package main

import (
	"encoding/json"
	"math/rand"
	"os"
	"runtime"
	"sort"
)

type item struct {
	key int
	id  int
}

type vector struct {
	Shape string `json:"shape"`
	Less  string `json:"less"`
	Keys  []int  `json:"keys"`
	Order []int  `json:"order"` // the input positions, in Go's sorted order
}

func shape(name string, n int, random *rand.Rand) []int {
	keys := make([]int, n)
	for i := range keys {
		switch name {
		case "few":
			keys[i] = random.Intn(3)
		case "wide":
			keys[i] = random.Intn(1 << 20)
		case "equal":
			keys[i] = 7
		case "sorted":
			keys[i] = i / 3
		case "reversed":
			keys[i] = (n - i) / 2
		case "pipe":
			if i < n/2 {
				keys[i] = i
			} else {
				keys[i] = n - i
			}
		case "saw":
			keys[i] = i % 9
		case "nearly":
			keys[i] = i
		}
	}
	if name == "nearly" && n > 3 {
		for s := 0; s < 3; s++ {
			a, b := random.Intn(n), random.Intn(n)
			keys[a], keys[b] = keys[b], keys[a]
		}
	}
	return keys
}

func main() {
	random := rand.New(rand.NewSource(28))
	vectors := []vector{}
	sizes := []int{0, 1, 2, 5, 8, 12, 13, 20, 33, 49, 50, 51, 64, 100, 257, 600}
	for _, name := range []string{"few", "wide", "equal", "sorted", "reversed", "pipe", "saw", "nearly"} {
		for _, n := range sizes {
			keys := shape(name, n, random)
			for _, less := range []string{"lt", "le"} {
				items := make([]item, n)
				for i, key := range keys {
					items[i] = item{key, i}
				}
				if less == "lt" {
					sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
				} else {
					sort.Slice(items, func(i, j int) bool { return items[i].key <= items[j].key })
				}
				order := make([]int, n)
				for i, it := range items {
					order[i] = it.id
				}
				vectors = append(vectors, vector{name, less, keys, order})
			}
		}
	}
	out := map[string]any{"go": runtime.Version(), "vectors": vectors}
	encoder := json.NewEncoder(os.Stdout)
	if err := encoder.Encode(out); err != nil {
		panic(err)
	}
}
