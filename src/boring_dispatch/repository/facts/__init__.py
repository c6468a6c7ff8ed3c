"""Facts derived at request time: security level, output audiences, certification warnings."""
