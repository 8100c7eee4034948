package results

import "testing"

func TestWhyNoneRecommended(t *testing.T) {
	limit := &Recommendation{MaxOOMRisk: 0.2}
	tests := []struct {
		name string
		plan Plan
		want string
	}{
		{"no front", Plan{}, "no strategy fits"},
		{"every row risky", Plan{Recommendation: limit, Pareto: []Result{{OOMRisk: 0.706}, {OOMRisk: 0.364}, {OOMRisk: 0.596}}},
			"every row's out-of-memory risk is above 20.0% (--max-oom-risk); the least is 36.4%, so --max-oom-risk 0.37 or more chips would recommend one"},
		{"one row", Plan{Recommendation: limit, Pareto: []Result{{OOMRisk: 0.5}}},
			"every row's out-of-memory risk is above 20.0% (--max-oom-risk); the least is 50.0%, so --max-oom-risk 0.50 or more chips would recommend one"},
	}
	for _, tt := range tests {
		if got := tt.plan.WhyNoneRecommended(); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
