"""Operations around the middleware: check a site, export files, metrics, IndexNow."""
