"""Knowledge builds: the build queue and its kinds (RAPTOR summary trees, the knowledge graph), and the
cached chat-model calls they make."""
