"""Loading: the configuration, direct module lookup and the no-follow file reader."""
