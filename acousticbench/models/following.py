"""A served model's endpoints read from a registry of replicas (acousticbench.models.replicas) while it runs: a
replica is used from the moment its file appears and given up when its file goes or it stops answering, its
questions on the wire handed back to the queue for the others."""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

from acousticbench.core.reporter import warn
from acousticbench.core.environment import env_number
from acousticbench.core.errors import UserError
from acousticbench.models.chat_wire import public_url
from acousticbench.models import replicas
from acousticbench.models.redirects import Origins
from acousticbench.models.health import health_status


JOBS_EVERY_S = 2.0  # how often squeue is asked while no replica is registered (it is a call to the controller)


def poll_s() -> float:
    return env_number("ACOUSTICBENCH_REGISTRY_POLL", 0.5)


def replica_wait_s() -> float:
    """How long a model may have no replica (before its first, or after its last ended) before its runs stop."""
    return env_number("ACOUSTICBENCH_REPLICA_WAIT", 900.0)


class Following:
    """Which registry files a model's endpoints came from, and which of them have ended."""

    def __init__(self, registry: Path, serve_name: str, model: str):
        self.registry, self.serve_name, self.model = Path(registry), serve_name, model
        self.index: dict[str, int] = {}  # registry key -> endpoint index
        self.by_index: dict[int, replicas.Replica] = {}
        self.ended: set[int] = set()
        self.refused: set[str] = set()  # keys whose server did not check out: not tried again
        self.versions: dict[int, str | None] = {}  # endpoint -> the server version it reported

    @property
    def where(self) -> Path:
        return replicas.folder_of(self.registry, self.serve_name)

    def new(self) -> list[replicas.Replica]:
        """Replicas registered since the last look that are not known yet."""
        return [r for r in replicas.read(self.registry, self.serve_name)
                if r.key not in self.index and r.key not in self.refused]

    def known(self, replica: replicas.Replica, index: int) -> None:
        self.index[replica.key] = index
        self.by_index[index] = replica

    def gone_from_registry(self) -> list[int]:
        """Endpoints whose registry file was removed (their job ended) and not yet counted as ended."""
        present = {r.key for r in replicas.read(self.registry, self.serve_name)}
        return [i for key, i in self.index.items() if key not in present and i not in self.ended]

    def missing(self) -> str | None:
        """Why the registry cannot be read at all (its folder does not exist, or is no folder), or None."""
        if not self.registry.is_dir():
            return (f"the registry folder {self.registry} (--endpoints-from, or ACOUSTICBENCH_ENDPOINTS_FROM) "
                    f"{'is not a folder' if self.registry.exists() else 'does not exist'}: give the folder the "
                    "replicas register in (docker_serve.sh --slurm writes it).")
        return None

    def vanished(self) -> str | None:
        """During a run: the registry folder, or this model's folder in it, was removed (nothing can register)."""
        for folder in (self.registry, self.where):
            if not folder.is_dir():
                return (f"the registry folder {folder} was removed during the run, so no replica of {self.model} can "
                        "register: restore it (or restart the replicas), then run the same command with --resume.")
        return None

    async def first(self) -> list[replicas.Replica]:
        """The replicas registered, waiting (up to ACOUSTICBENCH_REPLICA_WAIT) for the first to appear; a registry
        that does not exist is one line at once."""
        if self.missing():
            raise UserError(self.missing())
        deadline = time.monotonic() + replica_wait_s()
        looked = 0.0
        while not (found := self.new()):
            if time.monotonic() >= deadline:
                raise UserError(self.none_message())
            if time.monotonic() - looked >= JOBS_EVERY_S:  # a replica job that died before it registered
                looked = time.monotonic()
                await self.check_jobs()
            await asyncio.sleep(poll_s())
        return found

    async def check_jobs(self) -> None:
        """Raise UserError naming the job when SLURM runs no job of this model's replicas any more."""
        ended = await asyncio.to_thread(replicas.jobs_ended, self.registry, self.serve_name)
        if ended:
            raise UserError(f"{ended}: fix what it says, then start the replicas again "
                            f"(`./scripts/docker_serve.sh {self.serve_name} --slurm`).")

    def none_message(self) -> str:
        return (f"no replica of {self.model} registered in {self.where} within {replica_wait_s():g} s "
                f"(ACOUSTICBENCH_REPLICA_WAIT): start them with `./scripts/docker_serve.sh {self.serve_name} --slurm` "
                "or point --endpoints-from at the folder they write to.")

    async def lost(self, index: int, url: str) -> bool:
        """After a broken connection: has endpoint `index` ended (its file removed, or /health no longer answers)?"""
        if index in self.ended:
            return True
        replica = self.by_index.get(index)
        if replica is None:
            return False  # an endpoint given by hand: its failures are the question's
        if replicas.is_registered(self.registry, self.serve_name, replica.key):
            if await asyncio.to_thread(health_status, url) == 200:  # a dead engine answers /health with 500
                return False
        return True

    def end(self, index: int, why: str) -> None:
        if index not in self.ended:
            self.ended.add(index)
            replica = self.by_index.get(index)
            warn(f"{self.model}: replica {replica.key if replica else index} at {replica.url if replica else '?'} "
                  f"{why}; its questions go to the others")

    def describe(self) -> list[dict]:
        """config.json's record of which replicas answered: job, node, URL, server version, and whether it ended."""
        return [{**self.by_index[i].describe(), "server_version": self.versions.get(i), "ended": i in self.ended}
                for i in sorted(self.by_index)]


class FollowsRegistry:
    """What a served model (acousticbench.models.openai_compat.ServedModel) does with a registry: its endpoints made
    from the replicas registered, then kept in step with them and with the engine's slots while it runs."""

    async def _check_registered(self, found: list[replicas.Replica], wait_s: float) -> None:
        """The replicas registered at the start, one endpoint each; one that does not check out is left out."""
        for i, replica in enumerate(found):
            self.following.known(replica, i)
        checked = await asyncio.gather(*(self._check(i, wait_s) for i in range(len(found))), return_exceptions=True)
        for i, result in enumerate(checked):
            if isinstance(result, BaseException):
                self.following.refused.add(found[i].key)
                await self._end(i, f"did not check out ({result})")
        served = [r for r in checked if not isinstance(r, BaseException)]
        if not served:
            raise checked[0] if isinstance(checked[0], UserError) else UserError(str(checked[0]))
        if len(set(served)) > 1:
            raise UserError(f"the replicas of {self.name} in {self.following.where} serve different models "
                            f"({', '.join(sorted(set(served)))}): one folder per model.")
        self.api_model = served[0]
        self.served_ids = served

    async def watch_endpoints(self, slots) -> None:
        """Until cancelled: add each replica that registers, retire each that leaves; fail the queue when none has
        been left for ACOUSTICBENCH_REPLICA_WAIT."""
        if self.following is None:
            return
        self._slots = slots
        for i in self.following.ended:
            slots.retire(i)
        alone_since, looked = None, 0.0
        while True:
            await asyncio.sleep(poll_s())
            if self.following.vanished():
                return slots.fail(UserError(self.following.vanished()))
            for i in self.following.gone_from_registry():
                await self._end(i, "left the registry")
            for replica in self.following.new():
                await self._join(replica)
            if slots.live:
                alone_since, looked = None, 0.0
            elif time.monotonic() - (alone_since := alone_since or time.monotonic()) > replica_wait_s():
                return slots.fail(UserError(self.following.none_message()))
            elif time.monotonic() - looked >= JOBS_EVERY_S:  # every replica gone, and no job left to bring one
                looked = time.monotonic()
                try:
                    await self.following.check_jobs()
                except UserError as err:
                    return slots.fail(err)

    async def _join(self, replica: replicas.Replica) -> None:
        """A replica that registered during the run: checked, then its own lane in the queue."""
        i = len(self.roots)
        self.roots.append(replica.url)
        self.origins.append(Origins(self.name, replica.url))  # a replica may redirect too: said and recorded alike
        self._endpoints.add()
        self.following.known(replica, i)
        try:
            served = await self._check(i, env_number("ACOUSTICBENCH_CONNECT_WAIT", 10.0))
            if served != self.api_model:
                raise UserError(f"it serves {served}, not {self.api_model}")
        except UserError as err:
            self.following.refused.add(replica.key)
            self._slots.retire(i)  # its lane exists (indices stay aligned) but takes nothing
            self._slots.add(public_url(self.roots[i]))
            return await self._end(i, f"did not check out ({err})")
        self._slots.add(public_url(self.roots[i]))
        warn(f"{self.name}: replica {replica.key} at {public_url(self.roots[i])} joined")

    async def _lost(self, i: int) -> bool:
        """After a broken connection to endpoint i: True (and it is retired) when its replica has ended."""
        if not await self.following.lost(i, self.roots[i]):
            return False
        await self._end(i, "stopped answering")
        return True

    async def _end(self, i: int, why: str) -> None:
        if i in self.following.ended:
            return
        self.following.end(i, why)
        if self._slots is not None:
            self._slots.retire(i)
        await self._endpoints.sessions[i].close()  # what is still on the wire to it comes back at once
