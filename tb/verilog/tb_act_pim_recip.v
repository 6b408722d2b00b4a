// Testbench-only wrapper (not part of the generated RTL): PIM-CapsNet's reciprocal divide
// (capsgen_act_pim_recip) behind the divider's ports of tb_act_parts.v (div_*), so that
// tb/activation_tb.cpp drives both divide units with the same code. Ports are 32 bits wide whatever
// the config; the real widths come from activation.json and the connections truncate / zero-extend.
// verilator lint_off WIDTH
module tb_act_pim_recip (
  input  wire clk_i,
  input  wire rst_ni,
  input  wire div_valid_i,
  input  wire div_last_i,
  input  wire [31:0] div_num_i,
  input  wire [31:0] div_den_i,
  output wire div_valid_o,
  output wire div_last_o,
  output wire [31:0] div_quot_o,
  output wire div_busy_o
);
  capsgen_act_pim_recip u_recip (
    .clk_i(clk_i),
    .rst_ni(rst_ni),
    .in_valid_i(div_valid_i),
    .in_last_i(div_last_i),
    .num_i(div_num_i),
    .den_i(div_den_i),
    .out_valid_o(div_valid_o),
    .out_last_o(div_last_o),
    .quot_o(div_quot_o),
    .busy_o(div_busy_o)
  );
endmodule
// verilator lint_on WIDTH
