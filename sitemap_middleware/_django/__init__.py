"""Django integration (public names in ``sitemap_middleware.django``)."""
