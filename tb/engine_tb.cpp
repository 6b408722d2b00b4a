// The compute engine's block test and its host-fed program mode (tb/engine_tb.hpp) on capsgen_engine.
#include "Vengine.h"
#include "engine_tb.hpp"

int engine_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "[--program DIR]");
  engine_tb::EngineTb<Vengine> t(args);
  return t.run();
}
