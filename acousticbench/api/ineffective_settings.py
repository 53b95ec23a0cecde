"""Run settings given that would do nothing beside the others, each refused in one line naming the two: a flag that
goes with --compare-reference without it, what a dry run never does, a server setting for models that have none."""
from __future__ import annotations

import inspect

from acousticbench.core.errors import UserError
from acousticbench.core.settings import RunSettings, flag_of

# settings read only by --compare-reference
WITH_COMPARE = ("reference_tolerance", "references")
# what a dry run (it renders the prompts and prices the plan, and calls nothing) never does
NOT_IN_DRY_RUN = ("resume", "compare_reference", "max_error_rate")
# settings only a backend that talks to a server takes (its constructor names them)
SERVER_SETTINGS = ("endpoint", "endpoints_from", "api_model")


def check_unused(settings: RunSettings) -> None:
    """Raise UserError for the first setting given that cannot take effect with the others."""
    given = settings.model_fields_set

    def flag(name: str) -> str:
        return flag_of(RunSettings, name)

    for name in WITH_COMPARE:
        if name in given and not settings.compare_reference:
            raise UserError(f"{flag(name)} takes effect only with --compare-reference: add it, or drop {flag(name)}.")
    if settings.dry_run:
        for name in NOT_IN_DRY_RUN:
            if name in given and getattr(settings, name) != RunSettings.model_fields[name].default:
                raise UserError(f"{flag(name)} has no effect on a --dry-run, which calls nothing and writes nothing: "
                                f"drop one of them.")
    for name in SERVER_SETTINGS:
        if getattr(settings, name) is not None and not any(_takes(model, name, settings) for model in settings.models):
            raise UserError(f"{flag(name)} has no effect on {', '.join(settings.models)}, which "
                            f"{'talks' if len(settings.models) == 1 else 'talk'} to no server: drop {flag(name)}, or "
                            "pick a model that does (see `acousticbench models`).")


def _takes(model: str, name: str, settings: RunSettings) -> bool:
    """Whether the model's backend takes the setting: its constructor names it (a model computed here does not)."""
    from acousticbench.run.catalog import get_model

    backend = get_model(model, settings.archive).backend_class()
    return name in inspect.signature(backend.__init__).parameters
