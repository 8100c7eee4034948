"""Writes the tables of results/testdata/emit from the frameworks' sources.

Usage: python3 extract.py FRAMEWORK SRC EMIT_CHECK_DIR > FILE
FRAMEWORK is megatron, torchtitan, maxtext or deepspeed; SRC the framework's
source tree at the commit named in the file's header; EMIT_CHECK_DIR the
emit-check tools (its stubs.py stands in for torch and friends, so that
Megatron-LM's own argparse parser can be built without them).
Each output line is a flag or key, then, after a tab, its choices
(comma-separated) when the framework restricts them.
"""

import argparse
import ast
import contextlib
import io
import os
import re
import sys


def megatron(src, tools):
    sys.path.insert(0, tools)
    import stubs
    sys.path.insert(0, src)
    import meg_check
    stubs.install(meg_check.STUBBED, {'torch': '2.9.0', 'transformer_engine': '2.12.0'})
    with contextlib.redirect_stderr(io.StringIO()):
        import megatron.training.arguments as A
    got = {}

    def grab(self, *a, **k):
        for act in self._actions:
            for o in act.option_strings:
                if o.startswith('--'):
                    got[o] = [str(c) for c in act.choices] if act.choices else []
        raise SystemExit(0)
    argparse.ArgumentParser.parse_args = grab
    argparse.ArgumentParser.parse_known_args = grab
    sys.argv = ['pretrain_gpt.py']
    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        A.parse_args()
    return got


def literal_choices(node):
    """The strings of a Literal[...] annotation (also inside Optional/|)."""
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Subscript) and getattr(n.value, 'id', getattr(n.value, 'attr', '')) == 'Literal':
            for c in ast.walk(n.slice):
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    out.append(c.value)
    return out


def dataclass_fields(path):
    tree = ast.parse(open(path).read())
    classes = {}
    for n in tree.body:
        if isinstance(n, ast.ClassDef):
            fields = {}
            for s in n.body:
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                    ann = ast.unparse(s.annotation)
                    fields[s.target.id] = (ann, literal_choices(s.annotation))
            classes[n.name] = fields
    return classes


def torchtitan(src, tools):
    classes = dataclass_fields(os.path.join(src, 'torchtitan/config/job_config.py'))
    got = {}

    def walk(cls, prefix):
        for name, (ann, choices) in classes[cls].items():
            if ann in classes:
                walk(ann, prefix + name + '.')
            else:
                got[prefix + name] = choices
    walk('JobConfig', '')
    return got


def maxtext(src, tools):
    got = {}
    for line in open(os.path.join(src, 'src/maxtext/configs/base.yml')):
        m = re.match(r'^([A-Za-z_][A-Za-z0-9_]*):', line)
        if m:
            got[m.group(1)] = []
    types_py = open(os.path.join(src, 'src/maxtext/configs/types.py')).read()
    tree = ast.parse(types_py)
    for n in ast.walk(tree):
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id in got:
            ch = literal_choices(n.annotation)
            if ch:
                got[n.target.id] = ch
        if isinstance(n, ast.ClassDef) and n.name in ('RematPolicy', 'HardwareType', 'QuantizationType'):
            pass
    # Enum-typed keys: their values.
    enums = {}
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and any(getattr(b, 'id', getattr(b, 'attr', '')) in ('Enum', 'str') for b in n.bases):
            vals = [s.value.value for s in n.body if isinstance(s, ast.Assign) and isinstance(getattr(s, 'value', None), ast.Constant) and isinstance(s.value.value, str)]
            if vals:
                enums[n.name] = vals
    for n in ast.walk(tree):
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id in got and not got[n.target.id]:
            ann = ast.unparse(n.annotation)
            for e, vals in enums.items():
                if re.search(r'\b%s\b' % e, ann):
                    got[n.target.id] = vals
    # remat_policy is a plain string: its names are those get_remat_policy
    # compares it with (src/maxtext/layers/decoders.py), "full" its last.
    dec = open(os.path.join(src, 'src/maxtext/layers/decoders.py')).read()
    names = []
    for m in re.finditer(r'cfg\.remat_policy (?:==|in) (\([^)]*\)|"[^"]*")', dec):
        for q in re.findall(r'"([^"]*)"', m.group(1)):
            if q not in names:
                names.append(q)
    got['remat_policy'] = names
    return got


def deepspeed(src, tools):
    got = {}
    text = open(os.path.join(src, 'deepspeed/runtime/constants.py')).read()
    for m in re.finditer(r'^[A-Z_0-9]+\s*=\s*"([a-z_0-9]+)"\s*$', text, re.M):
        got[m.group(1)] = []
    tree = ast.parse(open(os.path.join(src, 'deepspeed/runtime/zero/config.py')).read())
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and n.name == 'DeepSpeedZeroConfig':
            for s in n.body:
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                    got['zero_optimization.' + s.target.id] = []
                    if isinstance(s.value, ast.Call):
                        for kw in s.value.keywords:
                            if kw.arg == 'alias' and isinstance(kw.value, ast.Constant):
                                got['zero_optimization.' + kw.value.value] = []
    text = open(os.path.join(src, 'deepspeed/runtime/activation_checkpointing/config.py')).read()
    for m in re.finditer(r'^ACT_CHKPT_[A-Z_]+\s*=\s*[\'"]([a-z_]+)[\'"]\s*$', text, re.M):
        got['activation_checkpointing.' + m.group(1)] = []
    got.setdefault('bf16.enabled', [])
    return got


def main():
    fw, src, tools = sys.argv[1:4]
    got = {'megatron': megatron, 'torchtitan': torchtitan, 'maxtext': maxtext, 'deepspeed': deepspeed}[fw](src, tools)
    for k in sorted(got):
        print(k + ('\t' + ','.join(got[k]) if got[k] else ''))


if __name__ == '__main__':
    main()
