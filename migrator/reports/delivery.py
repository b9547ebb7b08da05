"""Deliver a finished run's port into the team's repository: ``deliver_run``.

1. The team's repository is fetched (the run's git source, through the outbound-address policy, the
   host token only in git's environment) and the next commit of the port branch composed
   (``worker.delivery.compose``): the CUDA commit the run translated, the single-source or
   converted-copy change, the team's hand edits kept and conflicts recorded.
2. That tree is built on both sides in the sandbox (``worker.delivery.verify``). A tree that breaks
   the CUDA build (or does not build for ROCm) is recorded and neither pushed nor proposed.
3. It is pushed (fast-forward only) and, with a host token and a repository, one pull request per
   project, target branch and mode is opened or updated with the report and both results. Without a
   token on a network remote, a git bundle and the commands that apply it are kept instead.
Each call records a ``PortAttempt``; ``PortDelivery`` remembers what was delivered for the next one.
"""
from __future__ import annotations

import logging
import re
import shutil
from collections.abc import Callable, Collection
from dataclasses import asdict
from pathlib import Path

from django.conf import settings as django_settings

from migrator.integrations.models import HostKind, ProjectIntegration
from migrator.projects.actions import ActionError
from migrator.projects.constants import SourceKind
from migrator.projects.models import Run
from migrator.projects.workspaces import workspace_for
from migrator.reports.delivery_cuda import queue_cuda_check
from migrator.reports.delivery_text import apply_commands, pull_request_body, pull_request_title
from migrator.reports.models import PortAttempt, PortDelivery, PortState
from migrator.reports.posting import client_for
from migrator.reports.pulls import open_or_update
from migrator.runners.presence import online_runners
from worker.delivery.compose import Previous, compose
from worker.delivery.converted import converted_copy
from worker.delivery.gitrepo import PortRepo, RemoteSpec
from worker.delivery.model import MODES, Change, Mode
from worker.delivery.singlesource import build_system, single_source
from worker.delivery.verify import SideResult, verify_cuda, verify_rocm
from worker.delivery.verify_extension import verify_cuda_extension, verify_rocm_extension
from worker.project_settings import ProjectSettings
from worker.sources.gitsource import GitSourceError, check_ref
from worker.sources.hostguard import HostPolicy

log = logging.getLogger(__name__)
Log = Callable[[str], None]
OFFERED = frozenset({PortState.PROPOSED, PortState.PUSHED, PortState.BUNDLED})
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def deliver_run(run: Run, branch: str, mode: str = "single-source", *, target: str = "",
                log: Log = lambda _: None, require_head: bool = False) -> PortAttempt | None:
    """Compose, verify, push and propose the port of ``run`` as ``branch``; ``ActionError`` for a run
    that cannot be delivered at all (every other outcome is a recorded attempt). ``require_head``: do
    nothing (None) unless the run's commit is the target branch's head."""
    chosen = _check(run, branch, mode)
    target = target or _target_of(run)
    record, _ = PortDelivery.objects.get_or_create(project=run.project, target_branch=target, mode=chosen,
                                                   defaults={"branch": branch})
    if record.branch != branch:  # another branch name: a new port branch, nothing carried over
        record.branch, record.last_commit, record.base_commit, record.generated = branch, "", "", {}
        record.pr_number, record.pr_url = None, ""
    folder = workspace_for(run.pk).root / "delivery" / chosen
    shutil.rmtree(folder, ignore_errors=True)
    integration = ProjectIntegration.objects.filter(project=run.project).first()
    try:
        repo = _repo(run, folder / "repo", integration, log)
        head, port_head = repo.fetch(target, branch)
        base = run.commit_sha or head
        if require_head and base != head:
            return None
        if not repo.has_commit(base):
            raise GitSourceError(f"the run's commit {base[:12]} is not on {target}")
        composed = compose(repo, base, port_head, _previous(record), _maker(run, chosen),
                           f"Port to ROCm/HIP ({chosen}) of {base[:12]}, Migrator run #{run.number}")
        tree = repo.export(composed.head, folder / "tree")
    except GitSourceError as exc:
        return _attempt(run, record, PortState.FAILED, error=str(exc))
    settings = ProjectSettings.stored_or_default(run.settings_used)
    system = composed.change.build_system if chosen == "single-source" else build_system(tree)
    rocm = _verify_rocm(tree, system, run, settings, log)
    # A setup.py extension's units need PyTorch's headers, which the reference path does not give them:
    # its CUDA side stays the delivering worker's extension check.
    on_runner = chosen == "single-source" and system != "setuptools" and rocm.status != "failed" \
        and bool(online_runners("cuda"))
    if on_runner:  # the CUDA reference path on a CUDA runner; offered once it passed (``offer_verified``)
        cuda = SideResult("cuda", "queued", "waiting for a CUDA runner to build the delivered branch", via="cuda runner")
    elif chosen == "single-source":
        cuda = _verify_cuda(tree, system, run, settings, log)
        cuda.via = "local nvcc on the delivering worker " + (
            "(a setup.py extension: its .cu sources with PyTorch's headers)" if system == "setuptools"
            else "(no CUDA runner registered)")
    else:
        cuda = SideResult("cuda", "skipped", "a converted copy is the AMD fork: its CUDA build is the original branch")
    files, added, removed = repo.numstat(base, composed.head)
    attempt = PortAttempt(run=run, delivery=record, commit=composed.head, rocm=rocm.to_dict(), cuda=cuda.to_dict(),
                          conflicts=[asdict(c) for c in composed.conflicts], kept_hand=composed.kept_hand,
                          examined=composed.examined, notes=list(composed.change.notes),
                          lines={"files": files, "added": added, "removed": removed})
    if cuda.status == "failed" or rocm.status == "failed":
        attempt.state = PortState.CUDA_BROKEN if cuda.status == "failed" else PortState.ROCM_BROKEN
        return _save(record, attempt)
    pending = {"head": composed.head, "push": composed.commit is not None, "generated": composed.generated, "base": base}
    if on_runner:
        attempt.state, attempt.pending = PortState.VERIFYING, pending
        _save(record, attempt)
        queue_cuda_check(attempt.pk)
        return attempt
    return _offer(run, record, attempt, repo, pending, integration, folder)


def offer_verified(attempt_id: int, log: Log = lambda _: None) -> PortAttempt | None:
    """After the CUDA runner's check passed: push and propose what was verified (nothing else is pushed)."""
    attempt = PortAttempt.objects.select_related("run", "run__project", "delivery").filter(
        pk=attempt_id, state=PortState.VERIFYING, cuda__status="passed").first()
    if attempt is None or not isinstance(attempt.pending, dict) or not attempt.pending.get("head"):
        return None
    run, record = attempt.run, attempt.delivery
    folder = workspace_for(run.pk).root / "delivery" / record.mode
    integration = ProjectIntegration.objects.filter(project=run.project).first()
    try:
        repo = _repo(run, folder / "repo", integration, log)
    except GitSourceError as exc:
        return _attempt(run, record, PortState.FAILED, error=str(exc))
    return _offer(run, record, attempt, repo, attempt.pending, integration, folder)


def _verify_rocm(tree: Path, system: str, run: Run, settings: ProjectSettings, log: Log) -> SideResult:
    if system == "setuptools":
        return verify_rocm_extension(tree, workspace_for(run.pk), settings, log)
    return verify_rocm(tree, system, workspace_for(run.pk), settings, log)


def _verify_cuda(tree: Path, system: str, run: Run, settings: ProjectSettings, log: Log) -> SideResult:
    if system == "setuptools":
        return verify_cuda_extension(tree, workspace_for(run.pk), settings, log)
    return verify_cuda(tree, system, workspace_for(run.pk), settings, log)


def _check(run: Run, branch: str, mode: str) -> Mode:
    if mode not in MODES:
        raise ActionError(f"delivery mode {mode!r}: choose single-source or copy")
    if not run.is_final:
        raise ActionError("the run has not finished")
    if run.source_kind != SourceKind.GIT or not run.git_url:
        raise ActionError("only a run fetched from a git repository can be delivered into it")
    try:
        check_ref(branch)
    except GitSourceError as exc:
        raise ActionError(f"port branch: {exc}") from exc
    if not branch:
        raise ActionError("name the port branch")
    if not workspace_for(run.pk).source.is_dir() or mode == "copy" and not workspace_for(run.pk).hip.is_dir():
        raise ActionError("the run's trees are gone (retention) or were never made: start a new run")
    return "copy" if mode == "copy" else "single-source"


def _target_of(run: Run) -> str:
    """The CUDA branch: the run's ref when it names a branch, else the one an earlier delivery used, else main."""
    if run.ref and not _SHA.match(run.ref):
        return run.ref
    earlier = PortDelivery.objects.filter(project=run.project).order_by("-updated_at").first()
    return earlier.target_branch if earlier else "main"


def _repo(run: Run, folder: Path, integration: ProjectIntegration | None, log: Log) -> PortRepo:
    token = integration.host_token if integration else ""
    user = "oauth2" if integration and integration.host_kind == HostKind.GITLAB else "x-access-token"
    policy = HostPolicy.build([], django_settings.MIGRATOR_GIT_TRUSTED_NETWORKS)
    return PortRepo(folder, RemoteSpec(run.git_url, token, user), allow_local=django_settings.MIGRATOR_ALLOW_LOCAL_GIT,
                    policy=policy, log=log)


def _previous(record: PortDelivery) -> Previous | None:
    if not record.last_commit:
        return None
    generated = {str(k): str(v) for k, v in record.generated.items()} if isinstance(record.generated, dict) else {}
    return Previous(record.last_commit, record.base_commit, generated)


def _maker(run: Run, mode: Mode) -> Callable[[Path, Collection[str] | None], Change]:
    translated = workspace_for(run.pk).hip
    hip = translated if translated.is_dir() else None
    if mode == "copy":
        assert hip is not None  # _check refused a copy without a translated tree
        return lambda tree, _only: converted_copy(tree, hip)
    return lambda tree, only: single_source(tree, hip, only)


def _is_local(url: str) -> bool:
    return url.lower().startswith(("file://", "/", "./", "../", "~"))


def _offer(run: Run, record: PortDelivery, attempt: PortAttempt, repo: PortRepo, verified: dict[str, object],
           integration: ProjectIntegration | None, folder: Path) -> PortAttempt:
    """Push (or bundle) and propose ``verified``: {head, push (a new commit), generated, base}."""
    head, push = str(verified["head"]), bool(verified.get("push"))
    token = integration.host_token if integration else ""
    if not token and not _is_local(run.git_url):
        bundle = repo.bundle(head, record.branch, folder / f"{record.branch.replace('/', '-')}.bundle")
        attempt.state, attempt.bundle = PortState.BUNDLED, str(bundle)
        attempt.commands = apply_commands(bundle.name, record.branch, record.target_branch)
        return _save(record, attempt, verified)
    try:
        if push:
            repo.push(head, record.branch)
    except GitSourceError as exc:
        attempt.state, attempt.error = PortState.FAILED, f"push refused: {exc}"[:500]
        return _save(record, attempt)
    attempt.state = PortState.PUSHED
    repository = integration.repository if integration else ""
    if integration is not None and token and repository:
        client = client_for(integration)
        pull, answer = open_or_update(client, repository, record.pr_number, head=record.branch,
                                      base=record.target_branch, title=pull_request_title(run, attempt),
                                      body=pull_request_body(run, attempt))
        if pull is None:
            attempt.error = f"pull request not opened: {answer.error or answer.http_status}"[:500]
        else:
            record.pr_number, record.pr_url, attempt.state = pull.number, pull.url, PortState.PROPOSED
    elif token:
        attempt.notes = [*attempt.notes, "no repository set in the integration: pushed, no pull request opened"]
    return _save(record, attempt, verified)


def _save(record: PortDelivery, attempt: PortAttempt, verified: dict[str, object] | None = None) -> PortAttempt:
    if verified is not None and attempt.state in (PortState.PROPOSED, PortState.PUSHED):  # on the remote now
        generated = verified.get("generated")
        record.last_commit, record.base_commit = str(verified["head"]), str(verified["base"])
        record.generated = generated if isinstance(generated, dict) else {}
        attempt.pending = {}
    record.save()
    attempt.delivery = record
    attempt.save()
    return attempt


def _attempt(run: Run, record: PortDelivery, state: str, *, error: str) -> PortAttempt:
    return _save(record, PortAttempt(run=run, delivery=record, state=state, error=error[:500]))


def deliver_by_id(run_id: int, branch: str, mode: str) -> PortAttempt | None:
    run = Run.objects.select_related("project").filter(pk=run_id).first()
    if run is None:
        return None
    try:
        return deliver_run(run, branch, mode)
    except ActionError as exc:
        log.warning("run %s cannot be delivered: %s", run_id, exc)
        return None


def redeliver(run_id: int) -> list[PortAttempt]:
    """After a webhook run: update every port branch of its project whose CUDA branch the run's commit
    now heads (a push to another branch leaves them alone)."""
    run = Run.objects.select_related("project").filter(pk=run_id).first()
    if run is None or not run.commit_sha:
        return []
    done = []
    for record in PortDelivery.objects.filter(project=run.project).order_by("pk"):
        try:
            done.append(deliver_run(run, record.branch, record.mode, target=record.target_branch, require_head=True))
        except ActionError as exc:
            log.warning("port %s not updated from run %s: %s", record.pk, run_id, exc)
    return [attempt for attempt in done if attempt is not None]
