{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[64,128],stop_gradient:[true]} : () -> tensor<64x128xf32>
    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : (tensor<64x128xf32>) -> tensor<64x128xf32>
}
