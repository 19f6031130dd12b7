"""Runs the hpatch tool's Lark grammar over scripts, for grammar_test.go.

usage: lark_check.py GRAMMAR CASES LEXER
CASES is a JSON array of scripts; the answer on stdout is a JSON array of
booleans: whether the grammar accepts each script. LEXER is Lark's Earley
lexer: dynamic (the mode llguidance, OpenAI's grammar engine, says it is
equivalent to) or dynamic_complete (every way to split the input).
"""
import json
import sys

import lark

grammar = open(sys.argv[1], encoding="utf-8").read()
cases = json.load(open(sys.argv[2], encoding="utf-8"))
parser = lark.Lark(grammar, parser="earley", lexer=sys.argv[3])
answers = []
for script in cases:
    try:
        parser.parse(script)
        answers.append(True)
    except lark.exceptions.LarkError:
        answers.append(False)
json.dump({"lark": lark.__version__, "accepted": answers}, sys.stdout)
