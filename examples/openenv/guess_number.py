"""Guess the number: a text game written with openenv-core's API (0.3.0), served as any OpenEnv
environment is (the workbench starts it with run.agentrl.json's command):

    python -m uvicorn guess_number:app --host 127.0.0.1 --port 8000

reset(seed, high=16) picks a number in 1..high from the seed; each step is a guess, answered "higher",
"lower" or "right". A right guess ends the episode with reward 1; a guess that is not a number costs a
try like a wrong one; after `tries` guesses the episode ends with reward 0.
"""

import random
import re
from typing import Any, Optional

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class GuessAction(Action):
    guess: str = Field(..., description="The number guessed, as text")


class GuessObservation(Observation):
    prompt: str = Field(default="", description="What the player reads")


class GuessNumber(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._secret = 0
        self._tries = 0

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, high: int = 16, tries: int = 4, **kwargs: Any) -> GuessObservation:
        self._secret = random.Random(seed).randint(1, high)
        self._tries = tries
        self._state = State(episode_id=episode_id, step_count=0, secret=self._secret)
        return GuessObservation(
            prompt=f"I am thinking of a whole number from 1 to {high}. You have {tries} guesses; I answer higher or lower. Reply with the number only.",
            done=False,
            reward=None,
        )

    def step(self, action: GuessAction, timeout_s: Optional[float] = None, **kwargs: Any) -> GuessObservation:  # type: ignore[override]
        self._state.step_count += 1
        self._tries -= 1
        found = re.search(r"-?\d+", action.guess)
        if found and int(found.group()) == self._secret:
            return GuessObservation(prompt="Right.", done=True, reward=1.0)
        hint = "That is not a number." if not found else ("Higher." if int(found.group()) < self._secret else "Lower.")
        return GuessObservation(prompt=f"{hint} {self._tries} guesses left.", done=self._tries <= 0, reward=0.0)

    @property
    def state(self) -> State:
        return self._state


app = create_app(GuessNumber, GuessAction, GuessObservation, env_name="guess_number", max_concurrent_envs=8)
