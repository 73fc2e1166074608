from typing import Any

from bridge_client import BridgeError, check_key
from dify_plugin import ToolProvider
from dify_plugin.errors.tool import ToolProviderCredentialValidationError


class PromptChallengesProvider(ToolProvider):
    def _validate_credentials(self, credentials: dict[str, Any]) -> None:
        try:
            check_key(
                base_url=credentials.get("base_url", ""),
                bridge_key=credentials.get("bridge_key", ""),
            )
        except BridgeError as exc:
            raise ToolProviderCredentialValidationError(str(exc)) from None
