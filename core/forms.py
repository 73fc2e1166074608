"""Form fields every app's admin forms share."""

from typing import Any

from django import forms


class LinesField(forms.CharField):
    """Words or phrases typed one a line, cleaned into a list (stored as a JSON list)."""

    widget = forms.Textarea(attrs={"rows": 4, "cols": 60})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(str(item) for item in value) if isinstance(value, list) else value

    def to_python(self, value: Any) -> list[str]:
        return [line.strip() for line in str(value or "").splitlines() if line.strip()]
