"""The players a benchmark plays as: site accounts found or made by name, so a later run
plays as the same ones."""


def bench_accounts(*, prefix: str, count: int) -> list:
    """`count` accounts named `{prefix}-{index}@example.com`, with no usable password."""
    from django.contrib.auth import get_user_model

    User = get_user_model()
    accounts = []
    for index in range(count):
        name = f"{prefix}-{index}@example.com"
        user = User.objects.filter(username=name).first()
        if user is None:
            user = User(username=name, email=name)
            user.set_unusable_password()
            user.save()
        accounts.append(user)
    return accounts
