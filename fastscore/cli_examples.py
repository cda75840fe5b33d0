"""One example per command, shown at the end of ``fastscore COMMAND --help``; each runs
as written from the repository's root (``problems/example`` is the bundled example)."""

EXAMPLES = {
    "score": "fastscore score --problems problems/example --sweep problems/example-sweep.jsonl "
             "--out out/example --executor local",
    "data": "fastscore data --problems problems/example --out out/splits --n-samples 200",
    "validate": "fastscore validate --problems problems/example",
    "report": "fastscore report out/example          # after the 'score' example; writes out/example/report/",
    "prepare": "fastscore prepare --problems problems/example --out out/tasks --layout mechbench",
    "graph": "fastscore graph --problems problems/example --task circular-orbit-period --out orbit.svg",
    "feedback": "fastscore feedback --task out/tasks/circular-orbit-period/agent --submission mechanism.txt"
                "   # after the 'prepare' example; mechanism.txt: one equation a line",
    "serve": "fastscore serve --tasks out/tasks --port 8000   # after the 'prepare' example",
}
"""Command name -> a command line (with a comment where it needs an earlier step)."""
