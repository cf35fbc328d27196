from heapscope.cli import main

raise SystemExit(main())
