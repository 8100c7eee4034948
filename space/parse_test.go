package space

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseDefaults(t *testing.T) {
	got, err := Parse("")
	if err != nil {
		t.Fatalf("Parse(\"\") error: %v", err)
	}
	if want := Defaults(); !reflect.DeepEqual(got, want) {
		t.Errorf("Parse(\"\") = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "dp=1" {
		t.Errorf("Defaults().String() = %q, want %q", s, "dp=1")
	}
	tp, err := Parse("tp=8")
	if err != nil || !tp.SP {
		t.Errorf("Parse(tp=8) = %+v, %v; want sp true by default", tp, err)
	}
}

func TestParseString(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"tp=8,pp=16,dp=128", "dp=128,tp=8,pp=16"},
		{" TP = 8 , sp=false ", "tp=8,sp=false"},
		{"sp=true", "sp=true"},
		{"dp=1,zero=0,fsdp=1,tp=1,cp=1,pp=1,ep=1,mb=1,schedule=1f1b,v=1,recompute=none", "dp=1"},
		{"dp=4,zero=1,fsdp=2,tp=4,cp=2,pp=2,ep=4,mb=2,schedule=Interleaved,v=2,recompute=selective",
			"dp=4,zero=1,fsdp=2,tp=4,cp=2,pp=2,ep=4,mb=2,schedule=interleaved,v=2,recompute=selective"},
		{"tp=8,fsdp=16,mesh=tp:z;fsdp:x.y", "fsdp=16,tp=8,mesh=tp:z;fsdp:x.y"},
		{"mesh=dp:node*8;tp:gpu;pp:node*16,dp=8,tp=8,pp=16", "dp=8,tp=8,pp=16,mesh=tp:gpu;pp:node*16;dp:node*8"},
		{"schedule=gpipe,recompute=full,", "schedule=gpipe,recompute=full"},
		{"pp=4,schedule=ZBH1", "pp=4,schedule=zb-h1"},
		{"pp=4,schedule=zbv", "pp=4,schedule=zb-v"},
		{"last=14,FIRST=16,pp=8,schedule=interleaved,v=8", "pp=8,first=16,last=14,schedule=interleaved,v=8"},
		{"pp=16,last=1", "pp=16,last=1"},
		{"pp=4,schedule=DualPipe-V", "pp=4,schedule=dualpipev"},
		{"pp=4,schedule=dualpipe", "pp=4,schedule=dualpipe"},
		{"ep=2,dp=2,mesh=ep:gpu*2;dp:gpu*2", "dp=2,ep=2,mesh=dp:gpu*2;ep:gpu*2"},
		{"precision=FP8,tp=8", "tp=8,precision=fp8"},
		{"precision=bf16", "dp=1"},
		{"precision=INT8", "precision=int8"},
		{"etp=1", "dp=1"},
		{"tp=2,etp=2", "tp=2,etp=2"},
		{"tp=4,etp=1", "tp=4"},
	}
	for _, tt := range tests {
		s, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q) error: %v", tt.in, err)
			continue
		}
		if got := s.String(); got != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
		back, err := Parse(s.String())
		if err != nil || !reflect.DeepEqual(back, s) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", s.String(), back, err, s)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"tpp=8", `space: strategy key "tpp" is unknown (did you mean "tp"?)`},
		{"tp=0", "space: tp=0 must be a positive integer"},
		{"tp=x", "space: tp=x must be a positive integer"},
		{"mb=-1", "space: mb=-1 must be a positive integer"},
		{"first=0", "space: first=0 must be a positive integer"},
		{"pp=8,last=x", "space: last=x must be a positive integer"},
		{"tp8", `space: strategy item "tp8" is not key=value`},
		{"tp=2,tp=4", `space: strategy key "tp" is given twice`},
		{"zero=3", "space: zero=3 must be 0, 1 or 2"},
		{"sp=maybe", "space: sp=maybe must be true or false"},
		{"schedule=1f1", `space: schedule "1f1" is unknown (did you mean "1f1b"?)`},
		{"recompute=everything", `space: recompute "everything" is unknown (known: none, selective, full, minimal`},
		{"mesh=", "space: mesh= is empty"},
		{"mesh=;", "space: mesh= names no dimension"},
		{"mesh=tp", `space: mesh part "tp" is not dim:axes`},
		{"mesh=tq:x", `space: mesh dimension "tq" is unknown (did you mean "tp"?)`},
		{"mesh=tp:x;tp:y", `space: mesh dimension "tp" is given twice`},
		{"mesh=tp:x.x", `space: mesh dimension tp lists axis "x" twice`},
		{"mesh=tp:x*0", "space: mesh share x*0 must give a positive integer share size"},
		{"mesh=tp:x..y", "empty or malformed axis name"},
		{"foo=1", `space: strategy key "foo" is unknown`},
		{"precision=fp4", `space: precision "fp4" is unknown (did you mean "fp8"?)`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "tp=8,pp=16,dp=128", "mesh=tp:gpu;pp:node*16;dp:node*8", "sp=false,tp=2",
		"schedule=interleaved,v=3,pp=4", "zero=2,recompute=selective", "pp=8,first=15,last=15", "first=0", "last=-3,pp=2", "first=99999999999999999999", "tp=8,fsdp=16,mesh=tp:z;fsdp:x.y", "mesh=ep:x*2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "space: ") {
				t.Errorf("Parse(%q) error %q lacks the space: prefix", in, err)
			}
			return
		}
		out := s.String()
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) (from %q) error: %v", out, in, err)
		}
		if !reflect.DeepEqual(back, s) {
			t.Fatalf("Parse(%q) = %+v, want %+v (from %q)", out, back, s, in)
		}
		if back.String() != out {
			t.Fatalf("String not stable: %q then %q", out, back.String())
		}
		if fx, err := ParseFix(in); err != nil {
			t.Fatalf("ParseFix(%q) error %v but Parse accepted it", in, err)
		} else if !fx.Allows(s) {
			t.Fatalf("ParseFix(%q).Allows(Parse(%q)) = false", in, in)
		}
	})
}

func TestFix(t *testing.T) {
	f, err := ParseFix("pp=16, TP=8, mesh=tp:gpu, schedule=GPipe")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.String(), "tp=8,pp=16,schedule=gpipe,mesh=tp:gpu"; got != want {
		t.Errorf("Fix.String() = %q, want %q", got, want)
	}
	if !f.Has("tp") || f.Has("dp") {
		t.Errorf("Fix.Has: tp %v dp %v, want true false", f.Has("tp"), f.Has("dp"))
	}
	tests := []struct {
		s    string
		want bool
	}{
		{"dp=128,tp=8,pp=16,schedule=gpipe,mesh=tp:gpu*8;pp:node*16;dp:node*128", true},
		{"dp=128,tp=8,pp=16,schedule=gpipe,mesh=tp:gpu;pp:node*16;dp:node*128", true},
		{"dp=128,tp=8,pp=16,schedule=gpipe", false}, // unplaced: the pinned mesh cannot match
		{"dp=128,tp=8,pp=16,schedule=1f1b,mesh=tp:gpu*8;pp:node*16;dp:node*128", false},
		{"dp=64,tp=8,pp=16,cp=2,schedule=gpipe,mesh=tp:gpu*4.node*2;pp:node*16;dp:gpu*2.node*64", false},
		{"dp=128,tp=8,pp=16,schedule=gpipe,mesh=tp:node*8;pp:gpu*8.node*2;dp:node*128", false},
	}
	for _, tt := range tests {
		s, err := Parse(tt.s)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Allows(s); got != tt.want {
			t.Errorf("Fix(%q).Allows(%q) = %v, want %v", f, tt.s, got, tt.want)
		}
	}
	if !(Fix{}).Allows(Strategy{}) {
		t.Error("the zero Fix must allow everything")
	}
	bad := Fix{Set: map[string]string{"tpp": "8"}}
	if bad.Allows(Defaults()) || bad.Validate() == nil {
		t.Error("a Fix with an unknown key must allow nothing and fail Validate")
	}
	// etp pins tp: the planner's etp is tp.
	if f, err := ParseFix("etp=4"); err != nil || f.String() != "tp=4,etp=4" {
		t.Errorf("ParseFix(etp=4) = %q, %v; want tp=4,etp=4", f, err)
	}
	if _, err := ParseFix("etp=2,tp=4"); err == nil || !strings.Contains(err.Error(), "etp=2 with tp=4") {
		t.Errorf("ParseFix(etp=2,tp=4) error = %v", err)
	}
	// etp=1 (whole experts) is a pin of its own.
	if f, err := ParseFix("etp=1"); err != nil || f.String() != "etp=1" {
		t.Errorf("ParseFix(etp=1) = %q, %v; want etp=1", f, err)
	}
	if _, err := ParseFix("tp=8,tp=4"); err == nil || !strings.Contains(err.Error(), `fix key "tp" is given twice`) {
		t.Errorf("ParseFix(tp=8,tp=4) error = %v", err)
	}
}
