"""Checks the registry of admission rules against the docs and the tests.

check_decline_rules.py SRC: reads SRC/include/fusion/Transforms/Declines.def
and checks that
  - every rule's tag is named (as `tag` or "tag") in the section of
    docs/passes.md of its pass ("## `pass-name`" up to the next "## "),
  - every remark reason a lit test expects (Reason="...") is a registered
    tag,
then prints the rule count and the rules no lit test expects. Exit 1 on a
violation."""
import os
import re
import sys

src = sys.argv[1]
defs = open(os.path.join(src, "include/fusion/Transforms/Declines.def")).read()
rules = re.findall(r'^FUSION_DECLINE\((\w+), "([^"]+)", "([^"]+)"\)', defs, re.M)
docs = open(os.path.join(src, "docs/passes.md")).read()
sections = {}
for m in re.finditer(r"^## `([a-z0-9-]+)`\n(.*?)(?=^## |\Z)", docs, re.M | re.S):
    sections[m.group(1)] = m.group(2)

bad = []
for enum, pass_name, tag in rules:
    text = sections.get(pass_name)
    if text is None:
        bad.append("%s: docs/passes.md has no section for %s" % (enum, pass_name))
    elif "`%s`" % tag not in text and '"%s"' % tag not in text:
        bad.append('%s: "%s" is not in the %s section of docs/passes.md'
                   % (enum, tag, pass_name))

expected = set()
for root, _, files in os.walk(os.path.join(src, "test")):
    for f in files:
        if f.endswith((".mlir", ".test")):
            for tag in re.findall(r'Reason="([^"]*)"', open(os.path.join(root, f)).read()):
                expected.add(tag)
tags = {tag for _, _, tag in rules}
for tag in sorted(expected - tags):
    bad.append('a test expects Reason="%s", which is no registered rule' % tag)

for b in bad:
    print("error:", b)
print("%d rules in %d passes" % (len(rules), len({p for _, p, _ in rules})))
print("no test expects: " + ", ".join(sorted(e for e, _, t in rules if t not in expected)))
sys.exit(1 if bad else 0)
