// Testbench-only wrapper (not part of the generated RTL): the activation unit's three ROMs and its
// divider in one Verilated model for tb/activation_tb.cpp (--mode rom / divider), so each config
// builds one small model instead of four. Built with +define+TB_ACT_PIM_RECIP, the divide unit behind
// the div_* ports is PIM-CapsNet's reciprocal divide (capsgen_act_pim_recip, same ports), so the
// test drives both divide units with the same code. Ports are 32 bits wide whatever the config; the real
// widths come from activation.json and the connections truncate / zero-extend.
// verilator lint_off WIDTH
// verilator lint_off UNUSEDSIGNAL
module tb_act_parts (
  input  wire clk_i,
  input  wire rst_ni,
  input  wire [31:0] sqrt_addr_i,
  output wire [31:0] sqrt_data_o,
  input  wire [31:0] squash_addr_i,
  output wire [31:0] squash_data_o,
  input  wire [31:0] exp_addr_i,
  output wire [31:0] exp_data_o,
  input  wire div_valid_i,
  input  wire div_last_i,
  input  wire [31:0] div_num_i,
  input  wire [31:0] div_den_i,
  output wire div_valid_o,
  output wire div_last_o,
  output wire [31:0] div_quot_o,
  output wire div_busy_o
);
  capsgen_act_sqrt_rom u_sqrt (.clk_i(clk_i), .addr_i(sqrt_addr_i), .data_o(sqrt_data_o));
  capsgen_act_squash_rom u_squash (.clk_i(clk_i), .addr_i(squash_addr_i), .data_o(squash_data_o));
  capsgen_act_exp_rom u_exp (.clk_i(clk_i), .addr_i(exp_addr_i), .data_o(exp_data_o));
`ifdef TB_ACT_PIM_RECIP
  capsgen_act_pim_recip u_div (
`else
  capsgen_act_divider u_div (
`endif
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
// verilator lint_on UNUSEDSIGNAL
// verilator lint_on WIDTH
