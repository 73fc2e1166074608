"""Imports and publishes our workflow DSL files with Dify's own console code.

Run by check_with_dify.sh under the Python of a Dify API environment, from that API's
folder (so `app_factory`, `services` and `models` are Dify's), with Dify's DB_*, REDIS_*
and SECRET_KEY set to a throwaway database. Nothing here is Dify code: it calls Dify's
`AppDslService.import_app` and `WorkflowService.publish_workflow` as the console does and
reports what they answer.

    python dify_import_check.py FILE.yml [FILE.yml ...]

Exit status 0 when every file imports as `completed` (no DSL version warning, no pending
confirmation), names its plugins in a `dependencies` list, and publishes.
"""

import sys
from pathlib import Path


def main(paths: list[str]) -> int:
    sys.path.insert(0, str(Path.cwd()))  # Dify's API folder: its modules, not ours
    from app_factory import create_app

    _, app = create_app()  # (socket.io wrapper, Flask app)
    with app.app_context():
        from flask_migrate import upgrade

        upgrade()
        return _check_all(paths)


def _check_all(paths: list[str]) -> int:
    from extensions.ext_database import db
    from models.account import Account
    from services.account_service import TenantService
    from services.app_dsl_service import CURRENT_DSL_VERSION, AppDslService
    from services.workflow_service import WorkflowService

    # A workspace made as Dify's set-up makes one (its key pair encrypts secret variables).
    tenant = TenantService.create_tenant("Prompt Hacking Challenges check", is_setup=True)
    account = Account(
        name="check",
        email=f"check+{tenant.id}@example.com",
        interface_language="en-US",  # the app's web site takes its language from here
        timezone="UTC",
    )
    db.session.add(account)
    db.session.commit()
    TenantService.create_tenant_member(tenant, account, role="owner")
    account.set_tenant_id(tenant.id)

    failures = 0
    print(f"Dify's current DSL version: {CURRENT_DSL_VERSION}")
    for path in paths:
        text = Path(path).read_text()
        result = AppDslService(db.session).import_app(
            account=account, import_mode="yaml-content", yaml_content=text
        )
        db.session.commit()
        status = str(result.status.value if hasattr(result.status, "value") else result.status)
        line = f"{Path(path).name}: import {status} (DSL {result.imported_dsl_version})"
        if result.error:
            line += f" — {result.error}"
        ok = status == "completed"
        if result.app_id:
            from models import App

            line += f"; plugins Dify will check: {_stored_dependencies(result.app_id)}"
            app_model = db.session.get(App, result.app_id)
            published = _publish(db, WorkflowService(), app_model, account)
            line += f"; publish: {published}"
            ok = ok and published == "ok"
        print(line)
        failures += not ok
    return 1 if failures else 0


def _stored_dependencies(app_id: str) -> list[str]:
    # What import_app kept for the console's "install missing plugins" step.
    from extensions.ext_redis import redis_client
    from services.app_dsl_service import (
        CHECK_DEPENDENCIES_REDIS_KEY_PREFIX,
        CheckDependenciesPendingData,
    )

    stored = redis_client.get(f"{CHECK_DEPENDENCIES_REDIS_KEY_PREFIX}{app_id}")
    if not stored:
        return []
    pending = CheckDependenciesPendingData.model_validate_json(stored)
    return [dependency.value.plugin_unique_identifier for dependency in pending.dependencies]


def _publish(db, service, app_model, account) -> str:
    try:
        service.publish_workflow(session=db.session, app_model=app_model, account=account)
        db.session.commit()
    except Exception as error:  # report Dify's own refusal, whatever its type
        db.session.rollback()
        return f"refused — {type(error).__name__}: {error}"
    return "ok"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
