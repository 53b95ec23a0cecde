"""The listening verdict against simulated listeners of known truth (tests/servers/listener.py): a weak listener biased
to A that hears 16% of the differences is never called "not listening" (the old flag, the share of answers unchanged,
called it so in most cells), and a deaf listener that samples at a temperature above 0 is (the old flag never did)."""
from __future__ import annotations

import random

from acousticbench.core.listening_verdict import listening
from servers.listener import Listener, Question


def questions(n: int, cell: int) -> dict[str, Question]:
    rng = random.Random(cell)
    return {f"q{i}": Question(rng.choice("AB"), rng.randint(1, 5)) for i in range(n)}


def answers(listener: Listener, asked: dict[str, Question], seeds: tuple, salt: str = "") -> tuple[dict, dict]:
    """question -> seed -> right, and (question, seed) -> label, as a run of `listener` answers them; `salt`: asked
    again as another request (a sampling model draws afresh)."""
    right: dict = {}
    labels: dict = {}
    for qid, q in asked.items():
        for seed, (kind, label) in zip(seeds, listener.replies(salt + qid, q, seeds)):
            right.setdefault(qid, {})[seed] = kind == "answer" and label == q.answer
            labels[(qid, seed)] = label
    return right, labels


def verdicts(real: Listener, control: Listener, cells: int, n: int, seeds: tuple, salt: str, sampling: bool) -> list[str]:
    out = []
    for cell in range(cells):
        asked = questions(n, cell)
        real_cell = Listener(f"{real.name}-{cell}", real.knows, real.bias_a, consistency=real.consistency)
        control_cell = Listener(f"{real.name}-{cell}", control.knows, control.bias_a, consistency=control.consistency)
        right_a, labels_a = answers(real_cell, asked, seeds)
        right_b, labels_b = answers(control_cell, asked, seeds, salt)
        out.append(listening(right_a, right_b, labels_a, labels_b, sampling).verdict)
    return out


def test_a_weak_listener_biased_to_a_is_never_called_not_listening():
    # it hears 16% of the differences and guesses A 80% of the time otherwise; under silence it hears nothing
    weak = Listener("weak", knows=(0.16,) * 5, bias_a=0.8)
    silence = Listener("weak", knows=(0.0,) * 5, bias_a=0.8)
    found = verdicts(weak, silence, cells=48, n=200, seeds=(42, 43, 44, 45), salt="", sampling=False)
    assert not any(v.startswith("not listening") for v in found), found
    assert sum(v.startswith(("listens", "answers depend")) for v in found) >= 40, found


def test_a_deaf_listener_that_samples_is_called_not_listening():
    # at a temperature above 0 every request draws afresh (consistency 0): the control's answers change as much as
    # another seed's do, which the share of answers unchanged alone mistook for listening
    deaf = Listener("deaf", knows=(0.0,) * 5, consistency=0.0)
    found = verdicts(deaf, deaf, cells=64, n=800, seeds=tuple(range(42, 50)), salt="control|", sampling=True)
    assert sum(v.startswith("not listening") for v in found) >= 58, found  # 61 of 64; the old flag: 0
    assert sum(v.startswith("listens") for v in found) <= 4, found  # the test's own false positives (2.5% a cell)


def test_a_deterministic_deaf_listener_and_a_perfect_one():
    asked = questions(40, 0)
    deaf = Listener("same", knows=(0.0,) * 5, consistency=1.0)
    right, labels = answers(deaf, asked, (42, 43))
    assert listening(right, right, labels, labels, sampling=False).verdict.startswith("not listening")
    perfect = Listener("perfect", knows=(1.0,) * 5, consistency=1.0)
    right_a, labels_a = answers(perfect, asked, (42, 43))
    right_b, labels_b = answers(deaf, asked, (42, 43))
    assert listening(right_a, right_b, labels_a, labels_b, sampling=False).verdict.startswith("listens")


def test_too_few_questions_is_undecided_never_not_listening():
    deaf = Listener("few", knows=(0.0,) * 5, consistency=0.0)
    asked = questions(10, 1)
    right_a, labels_a = answers(deaf, asked, (42, 43))
    right_b, labels_b = answers(deaf, asked, (42, 43), "control|")
    assert listening(right_a, right_b, labels_a, labels_b, sampling=True).verdict.startswith("undecided")
