"""``torch._dynamo.backends``: compiler backends, each ``(GraphModule,
example_inputs) -> callable``."""
