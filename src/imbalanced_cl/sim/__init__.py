"""The paper's model and its training: data, encoder, loss, Algorithm 1 masks, the loop, measurements, theory."""
