"""AcousticBench task definitions: what each task asks, its clips, and what option A means."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AcousticTask:
    code: str
    attribute: str
    title: str
    clips: int
    question: str
    option_a: str
    option_b: str

    def prompt(self) -> str:
        """The prompt text stored with every question of the task."""
        intro = (
            "You will hear two audio clips, one after the other."
            if self.clips == 2
            else "You will hear one stereo audio clip."
        )
        return (
            f"{intro} {self.question}\n"
            f"A. {self.option_a}\n"
            f"B. {self.option_b}\n"
            "Answer with the letter of the correct option, A or B."
        )


_FIRST, _SECOND = "The first clip", "The second clip"

TASKS: dict[str, AcousticTask] = {
    t.code: t
    for t in (
        AcousticTask("pit", "pitch", "Pitch", 2, "Which clip has the higher pitch?", _FIRST, _SECOND),
        AcousticTask("lou", "loudness", "Loudness", 2, "Which clip is louder?", _FIRST, _SECOND),
        AcousticTask("dur", "duration", "Duration", 2, "Which clip contains the sound that lasts longer?", _FIRST, _SECOND),
        AcousticTask("tem", "tempo", "Tempo", 2, "Which clip has the faster beat?", _FIRST, _SECOND),
        AcousticTask("rad", "reverberation", "Reverberation", 2, "Which clip sounds more reverberant?", _FIRST, _SECOND),
        AcousticTask("dir", "direction", "Direction", 1, "Does the sound come from the left or from the right?", "Left", "Right"),
        AcousticTask("cnt", "counting", "Counting", 2, "Which clip contains more sound events?", _FIRST, _SECOND),
        AcousticTask("bri", "brightness", "Brightness", 2, "Which clip sounds brighter?", _FIRST, _SECOND),
    )
}
