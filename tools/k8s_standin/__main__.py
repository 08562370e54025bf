"""``python -m tools.k8s_standin up|down``: see launcher.py."""

import sys

from tools.k8s_standin.launcher import main

sys.exit(main())
