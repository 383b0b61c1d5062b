"""`python -m relugrad info`: the same facts as the CLI's `relugrad info`."""
import sys

from . import format_info


def main(argv: list) -> int:
    if argv[1:] in ([], ["info"]):
        print(format_info())
        return 0
    print("usage: python -m relugrad [info]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
