package search

import (
	"context"
	"testing"
)

func BenchmarkZZSearch(b *testing.B) {
	for _, ip := range issueProblems() {
		if ip.model != "mixtral-8x7b" && ip.model != "deepseek-v3" {
			continue
		}
		p := ip.problem(b)
		b.Run(ip.name(), func(b *testing.B) {
			for b.Loop() {
				if _, err := (Exhaustive{Workers: 1}).Search(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
